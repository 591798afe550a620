"""The newer api-version's attempts list (GET .../jobs/{job}/attempts) names each attempt's occurrence as that
occurrence's ledger entry does (`executionTag`, `occurrenceTime`, `trigger`); 2016-03-01 history lists the same
attempts exactly as before, without them, and the attempts list does not exist in 2016-03-01.

Against real Azurite and real local targets: a job retried twice (Fixed) with an Http error action, run by a
backfill of two past occurrences and a run-now, against a target answering 500. Their attempts interleave; each
one's identity is its ledger entry's and the execution tag the target saw."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from shared.store.keys import job_partition, job_rows
from tests.executor.peers.servers import Hit, Server, ok, serve
from tests.executor.support import fixed, http, put_job
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
STABLE = {"api-version": "2016-03-01"}
OLD_PROPERTIES = {
    "startTime",
    "endTime",
    "expectedExecutionTime",
    "actionName",
    "status",
    "message",
    "retryCount",
    "repeatCount",
}
IDENTITY = ("executionTag", "occurrenceTime", "trigger")


def _unavailable(hit: Hit) -> tuple[int, dict[str, str], bytes]:
    return 500, {"Content-Type": "text/plain"}, b"try later"


@pytest.fixture
def targets() -> Iterator[tuple[Server, Server]]:
    failing, fallback = serve(_unavailable), serve(ok)
    try:
        yield failing, fallback
    finally:
        failing.close()
        fallback.close()


def _z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _listed(rt: Runtime, operation: str, query: dict[str, str]) -> list[dict]:
    answer = call(rt, operation, "GET", "flaky", query=query)
    assert answer.status == 200, answer.body
    assert answer.body["nextLink"] is None
    return answer.body["value"]


def test_each_attempt_names_its_occurrence_as_its_ledger_entry_does_and_2016_history_does_not(
    runtime: Runtime, targets: tuple[Server, Server]
) -> None:
    failing, fallback = targets
    make_collection(runtime)
    # Daily, two hours from now: two past occurrences to backfill, and none due while the test runs.
    now = datetime.now(UTC).replace(microsecond=0)
    action = {**http(f"{failing.url}/work"), "errorAction": http(f"{fallback.url}/alarm")}
    properties = {"startTime": _z(now - timedelta(days=2, hours=-2)), "recurrence": {"frequency": "Day"}}
    put_job(runtime, "flaky", {**properties, "action": action}, retry=fixed(0.5, 2))
    window = {"from": _z(now - timedelta(days=2)), "to": _z(now - timedelta(hours=1))}
    backfilled = call(runtime, "Jobs_Backfill", "POST", "flaky", window, query=NEWER)
    assert backfilled.status == 200 and len(backfilled.body["value"]) == 2, backfilled.body
    assert call(runtime, "Jobs_Run", "POST", "flaky").status == 200
    drain(runtime, 60, until=lambda: len(fallback.hits) >= 3)

    ledger = {e["properties"]["executionTag"]: e["properties"] for e in _listed(runtime, "Jobs_ListJobHistory", NEWER)}
    attempts = _listed(runtime, "Jobs_ListAttempts", NEWER)
    assert len(ledger) == 3 and len(attempts) == 12 and len(failing.hits) == 9
    for entry in attempts:
        p = entry["properties"]
        occurrence = ledger[p["executionTag"]]
        assert {name: p[name] for name in IDENTITY} == {name: occurrence[name] for name in IDENTITY}
    per_occurrence = Counter(
        (e["properties"]["executionTag"], e["properties"]["actionName"], e["properties"]["retryCount"])
        for e in attempts
    )
    for tag, occurrence in ledger.items():
        assert occurrence["attempts"] == 3
        assert [per_occurrence[tag, "MainAction", n] for n in range(3)] == [1, 1, 1]
        assert per_occurrence[tag, "ErrorAction", 0] == 1
        # The requests the target saw under this tag are this occurrence's three attempts.
        assert sum(h.headers.get("x-ms-execution-tag") == tag for h in failing.hits) == 3
    triggers = Counter(p["trigger"] for p in ledger.values())
    assert triggers["Backfill"] == 2 and triggers["RunNow"] == 1

    old = _listed(runtime, "Jobs_ListJobHistory", STABLE)
    assert [e["id"] for e in old] == [e["id"] for e in attempts]
    assert all(set(e["properties"]) == OLD_PROPERTIES for e in old)
    assert [{k: v for k, v in e["properties"].items() if k not in IDENTITY} for e in attempts] == [
        e["properties"] for e in old
    ]
    refused = call(runtime, "Jobs_ListAttempts", "GET", "flaky", query=STABLE)
    assert refused.status == 400 and refused.body["error"]["code"] == "MissingOrInvalidRequiredQueryParameter"
    assert PREVIEW_API_VERSION in refused.body["error"]["message"]


def test_an_attempt_kept_before_its_occurrence_was_stored_with_it_names_its_tag_and_a_note_names_nothing(
    runtime: Runtime,
) -> None:
    make_collection(runtime)
    later = _z(datetime.now(UTC) + timedelta(days=1))
    put_job(runtime, "flaky", {"startTime": later, "action": http("http://127.0.0.1:9/")})
    key, at = JobKey(SUB, RG, JC, "flaky"), datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    row = {
        "PartitionKey": job_partition(key.collection_key),
        "ExpectedExecutionTime": at,
        "StartTime": at,
        "EndTime": at,
        "ActionName": "MainAction",
        "Message": "",
        "RetryCount": 0,
        "RepeatCount": 1,
    }
    # Rows as an earlier version wrote them: no Occurrence or Trigger column.
    runtime.store.history.table.upsert(
        {**row, "RowKey": job_rows(key, "0001"), "ExecutionId": "tag-1", "Status": "Failed"}
    )
    runtime.store.history.table.upsert(
        {**row, "RowKey": job_rows(key, "0002"), "ExecutionId": "postponed|x", "Status": "Postponed"}
    )
    attempt, note = (e["properties"] for e in _listed(runtime, "Jobs_ListAttempts", NEWER))
    assert attempt["executionTag"] == "tag-1" and "occurrenceTime" not in attempt and "trigger" not in attempt
    assert set(note) == OLD_PROPERTIES
