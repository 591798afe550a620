"""A PUT or PATCH that loses the race for its row to the executor's counters (written between the request's read
and its write) is done again on the fresh row and answers as a success, keeping the counters the executor wrote:
the client sent no ETag, so the old service never answered such a write 409."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared.api import ApiResponse
from shared.keys import JobKey
from shared.runtime import Runtime
from shared.store.storage import Storage
from shared.store.tables import read_modify_write
from tests.support.scheduler_client import JC, RG, SUB, call

# How often the counters change beside the requests: a job that fires ten times a second, far more often than
# any job may (a minute at best on the old service), yet most requests meet a counter write mid-way without the fix.
COUNTER_PERIOD_SECONDS = 0.1
COUNTER_WRITES = 20


@pytest.fixture
def storage() -> Storage | None:
    """Azurite: the race needs real round trips between a request's read and its write."""
    return None


def _job(uri: str) -> dict[str, object]:
    start = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    return {
        "properties": {
            "startTime": start.isoformat(),
            "recurrence": {"frequency": "Hour"},
            "action": {"type": "Http", "request": {"uri": uri, "method": "GET"}},
        }
    }


def _count_executions(rt: Runtime, key: JobKey, stop: threading.Event, counted: list[int]) -> None:
    """Bump the job's execution count under its ETag, as the executor's recorder does after each attempt."""
    while not stop.wait(COUNTER_PERIOD_SECONDS):
        written = read_modify_write(
            lambda: rt.store.jobs.get(key),
            lambda record: replace(record, execution_count=record.execution_count + 1),
            lambda record, _: rt.store.jobs.replace(record),
            attempts=50,
        )
        assert written is not None
        counted.append(written.execution_count)


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_a_write_racing_the_executors_counters_succeeds_and_keeps_them(runtime, method: str) -> None:
    collection = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}
    assert call(runtime, "JobCollections_CreateOrUpdate", "PUT", body=collection).status == 201
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "raced", _job("http://127.0.0.1:9/0")).status == 201
    key = JobKey(SUB, RG, JC, "raced")
    stop, counted = threading.Event(), list[int]()
    counter = threading.Thread(target=_count_executions, args=(runtime, key, stop, counted))
    counter.start()
    try:
        operation = "Jobs_CreateOrUpdate" if method == "PUT" else "Jobs_Patch"
        answers: list[ApiResponse] = []
        while len(counted) < COUNTER_WRITES:  # requests back to back for the span of this many counter writes
            answers.append(call(runtime, operation, method, "raced", _job(f"http://127.0.0.1:9/{len(answers)}")))
    finally:
        stop.set()
        counter.join()
    assert [(a.status, a.body.get("error")) for a in answers if a.status != 200] == []
    stored = runtime.store.jobs.get(key)
    assert stored is not None
    assert stored.properties.action.request.uri == f"http://127.0.0.1:9/{len(answers) - 1}"
    assert stored.execution_count == counted[-1]
