"""`scheduler dead-letters list|show|replay|purge` (scheduler_cli/dead_letters.py) against the real function_app.py
under the local host and a real local target: a run-now of a job without retries against a target answering 500
is dead-lettered; the commands list and show it, replay it (the target sees the same execution tag again), refuse
a bad pair of arguments, and purge it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.executor.peers.servers import Hit, Server, serve

RG, JC = "letters-rg", "letters-jc"
WHERE = ["-g", RG, "-c", JC]


@pytest.fixture(scope="module")
def failing() -> Iterator[Server]:
    def answer(_: Hit) -> tuple[int, dict[str, str], bytes]:
        return 500, {"Content-Type": "text/plain"}, b"broken"

    server = serve(answer)
    yield server
    server.close()


def _listed(cli) -> list[dict[str, Any]]:
    shown = cli("-o", "json", "dead-letters", "list", *WHERE)
    assert shown.exit_code == 0, shown.stderr
    return list(json.loads(shown.stdout))


def _until(check, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds  # well past the host's queue polling and record window
    while not check() and time.monotonic() < deadline:
        time.sleep(0.5)


def test_list_show_replay_and_purge(cli, failing: Server) -> None:
    assert cli("collections", "create", *WHERE, "-l", "westus").exit_code == 0
    ahead = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")  # only the run-now fires
    job = ["-n", "broken", "--uri", f"{failing.url}/hook", "--every", "1d", "--start", ahead, "--retry", "none"]
    made = cli("jobs", "create", *WHERE, *job)
    assert made.exit_code == 0, made.stderr
    assert cli("jobs", "run", *WHERE, "-n", "broken").exit_code == 0
    _until(lambda: bool(_listed(cli)))
    [letter] = _listed(cli)
    dead_letter = letter["name"].split("/", 1)[1]

    table = cli("dead-letters", "list", *WHERE)
    assert dead_letter in table.stdout and "DeadLettered" in table.stdout
    shown = cli("dead-letters", "show", dead_letter, *WHERE)
    assert shown.exit_code == 0, shown.stderr
    assert letter["properties"]["executionTag"] in shown.stdout and "Attempts" in shown.stdout

    both = cli("dead-letters", "replay", dead_letter, "--all", *WHERE)
    assert both.exit_code == 2 and "ids or --all" in both.stderr
    replayed = cli("dead-letters", "replay", dead_letter, *WHERE)
    assert replayed.exit_code == 0, replayed.stderr
    assert f"{dead_letter}: replay queued" in replayed.stdout
    _until(lambda: _listed(cli)[0]["properties"]["state"] == "DeadLettered" and len(failing.hits) == 2)
    assert len(failing.hits) == 2
    assert failing.hits[1].headers["x-ms-execution-tag"] == failing.hits[0].headers["x-ms-execution-tag"]
    assert _listed(cli)[0]["properties"]["replayCount"] == 1

    purged = cli("dead-letters", "purge", "--all", *WHERE)
    assert purged.exit_code == 0 and "Purged 1 dead letter(s)." in purged.stdout
    assert _listed(cli) == []
    gone = cli("dead-letters", "show", dead_letter, *WHERE)
    assert gone.exit_code != 0 and "ResourceNotFound" in gone.stderr
