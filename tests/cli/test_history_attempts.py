"""`scheduler jobs history` and `jobs ledger` show every attempt of an occurrence under it, against the real
function_app.py under the local host and real local targets: a job retried twice 15 s apart (Fixed) with an Http
error action, run twice a few seconds apart against a target answering 500. Each occurrence lists its three
failed attempts and its completed error action, in the order they ran and with the identity the target saw, and
the summary's attempts agree with the job's counters.

The two occurrences overlap so that times cannot tell them apart: the first one's retry 1 is answered slowly,
ending after the second one's retry 1, and the job's retry interval is changed afterwards. Each attempt names its
occurrence (the newer api-version's attempts list), so each still goes under its own."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest

from tests.executor.peers.servers import Hit, Server, ok, serve

RG, JC = "attempts-rg", "attempts-jc"
FLAGS = ["-g", RG, "-c", JC, "-n", "flaky"]


SLOW = 10.0  # seconds the first retry 1 is answered after: past the other occurrence's retry 1 (4 s later)


def _unavailable(hit: Hit) -> tuple[int, dict[str, str], bytes]:
    return 500, {"Content-Type": "text/plain"}, b"try later"


def _first_retry_slow(server: list[Server]) -> Callable[[Hit], tuple[int, dict[str, str], bytes]]:
    def respond(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        retries = [h for h in server[0].hits if h.headers.get("x-ms-scheduler-attempt") == "2"]
        if retries and retries[0] is hit:
            time.sleep(SLOW)
        return _unavailable(hit)

    return respond


@pytest.fixture(scope="module")
def targets() -> Iterator[tuple[Server, Server]]:
    made: list[Server] = []
    failing, fallback = serve(_first_retry_slow(made)), serve(ok)
    made.append(failing)
    try:
        yield failing, fallback
    finally:
        failing.close()
        fallback.close()


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_each_retry_and_the_error_action_are_under_their_occurrence(cli, targets, tmp_path: Path) -> None:
    failing, fallback = targets
    assert cli("collections", "create", "-g", RG, "-c", JC, "-l", "westus").exit_code == 0
    job = tmp_path / "flaky.json"
    job.write_text(
        json.dumps(
            {
                "properties": {
                    "recurrence": {"frequency": "Day", "schedule": {"hours": [3], "minutes": [0]}},
                    "action": {
                        "type": "Http",
                        "request": {"uri": f"{failing.url}/work", "method": "POST", "body": "x"},
                        "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 2},
                        "errorAction": {"type": "Http", "request": {"uri": f"{fallback.url}/alarm", "method": "POST"}},
                    },
                }
            }
        )
    )
    assert cli("jobs", "create", *FLAGS, "-f", str(job)).exit_code == 0
    assert cli("jobs", "run", *FLAGS).exit_code == 0
    time.sleep(4)  # the second occurrence's attempts interleave with the first's retries
    assert cli("jobs", "run", *FLAGS).exit_code == 0
    deadline = time.monotonic() + 150 + SLOW  # two retries 15 s apart, on a busy machine
    groups: list = []
    while time.monotonic() < deadline:
        groups = json.loads(cli("-o", "json", "jobs", "history", *FLAGS).stdout)
        status = json.loads(cli("-o", "json", "jobs", "show", *FLAGS).stdout)["properties"]["status"]
        counted = (status["executionCount"], status["failureCount"], status["faultedCount"]) == (8, 6, 2)
        if counted and len(fallback.hits) == 2 and all(len(g.get("attemptEntries", [])) == 4 for g in groups):
            break  # the history entries are written just before the counters
        time.sleep(1)
    assert len(failing.hits) == 6 and len(fallback.hits) == 2
    # The retry interval the attempts ran with is no longer the job's: no delay between them is the policy's.
    patch = tmp_path / "patch.json"
    retry = {"retryType": "Fixed", "retryInterval": "PT45S", "retryCount": 2}
    patch.write_text(json.dumps({"properties": {"action": {"retryPolicy": retry}}}))
    assert cli("jobs", "update", *FLAGS, "-f", str(patch)).exit_code == 0
    groups = json.loads(cli("-o", "json", "jobs", "history", *FLAGS).stdout)
    assert len(groups) == 2 and all(g["properties"]["trigger"] == "RunNow" for g in groups)
    for g in groups:
        attempts = [a["properties"] for a in g["attemptEntries"]]
        assert [(a["actionName"], a["status"], a["retryCount"]) for a in attempts] == [
            ("MainAction", "Failed", 0),
            ("MainAction", "Failed", 1),
            ("MainAction", "Failed", 2),
            ("ErrorAction", "Completed", 0),
        ]
        # The target's requests of this occurrence (its execution tag) are these attempts, one each.
        seen = [h.at for h in failing.hits if h.headers.get("x-ms-execution-tag") == g["properties"]["executionTag"]]
        assert len(seen) == 3
        for hit, main in zip(seen, attempts[:3], strict=True):
            assert abs((hit - _instant(main["startTime"])).total_seconds()) < 1.5

    table = cli("jobs", "history", *FLAGS)
    assert table.exit_code == 0, table.stderr
    flat = re.sub(r"\s+", " ", table.stdout)
    assert flat.count("retry 2") == 2 and flat.count("error action") >= 2 and flat.count("attempt 1") == 2
    assert "3 attempts, then the error action (Completed)" in flat
    assert (
        "Shown: 2 occurrences, 8 attempts (2 succeeded, 6 failed). The job's counters, all time: 8 attempts, "
        "6 failed, 2 faulted occurrences." in flat
    )
    ledger = re.sub(r"\s+", " ", cli("jobs", "ledger", *FLAGS).stdout)
    assert ledger.count("retry 1") == 2 and "Ledger of flaky" in ledger and "8 attempts" in ledger
    failed = json.loads(cli("-o", "json", "jobs", "ledger", *FLAGS, "--filter", "status eq 'Failed'").stdout)
    assert [len(g["attemptEntries"]) for g in failed] == [4, 4]
