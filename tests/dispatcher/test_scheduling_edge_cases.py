"""Scheduling edge cases: occurrences requeued by edits and by disable/enable, early start times, a failed
due-index write, retries outliving the last occurrence, end times already past, names that are not time zones."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from azure.core.exceptions import ServiceRequestError

from shared.dispatcher import Dispatcher
from shared.keys import JobKey
from shared.model import JobState
from shared.occurrence import OccurrenceMessage
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.store import DueIndex
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

T0 = datetime(2026, 3, 1, 12, 1, 0, tzinfo=UTC)


def http(url: str) -> dict[str, Any]:
    return {
        "type": "Http",
        "request": {"uri": url, "method": "POST", "body": "x"},
        "retryPolicy": {"retryType": "None"},
    }


def record(rt: Runtime, name: str) -> JobRecord:
    found = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
    assert found is not None
    return found


def put(rt: Runtime, name: str, properties: dict[str, Any]) -> dict[str, Any]:
    response = call(rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": properties})
    assert response.status in (200, 201), response.body
    return response.body


def patch(rt: Runtime, name: str, properties: dict[str, Any]) -> dict[str, Any]:
    response = call(rt, "Jobs_Patch", "PATCH", name, {"properties": properties})
    assert response.status == 200, response.body
    return response.body


def test_an_occurrence_requeued_by_an_edit_still_runs(settings, clock: ManualClock, http_target, storage) -> None:
    """The dispatcher queued T; a PATCH re-plans T under a new generation. The stale message must not
    mark T's claim done, or the re-planned message is dropped as a duplicate and T never runs."""
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    clock.current = T0 - timedelta(seconds=2)
    put(
        rt,
        "edited",
        {
            "startTime": T0.isoformat(),
            "action": http(http_target.url),
            "recurrence": {"frequency": "Minute", "interval": 1},
        },
    )
    patch(rt, "edited", {"action": {"request": {"body": "y"}}})
    clock.current = T0
    drain(rt, 3)
    assert [r.body for r in http_target.requests] == [b"y"]


def test_an_occurrence_requeued_by_disable_enable_still_runs(
    settings, clock: ManualClock, http_target, storage
) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    clock.current = T0 - timedelta(seconds=2)
    put(
        rt,
        "cycled",
        {
            "startTime": T0.isoformat(),
            "action": http(http_target.url),
            "recurrence": {"frequency": "Minute", "interval": 1},
        },
    )
    patch(rt, "cycled", {"state": "Disabled"})
    patch(rt, "cycled", {"state": "Enabled"})
    clock.current = T0
    drain(rt, 3)
    assert len(http_target.requests) == 1
    assert record(rt, "cycled").execution_count == 1


def test_a_start_time_before_year_1000_round_trips(settings, clock: ManualClock, storage) -> None:
    """`0001-01-01T00:00:00` is .NET's DateTime.MinValue, what a client sends for an unset DateTime. It was
    stored as "1-01-01T..." (unpadded %Y), which made the job unreadable: GET 500 and every dispatcher tick
    raising; with a Month or Year frequency the PUT itself was a 500 (a day before year 1)."""
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    for name, frequency in (("minutely", "Minute"), ("yearly", "Year"), ("monthly", "Month")):
        body = put(
            rt,
            name,
            {
                "startTime": "0001-01-01T00:00:00Z",
                "action": http("http://127.0.0.1:9/"),
                "recurrence": {"frequency": frequency},
            },
        )
        assert body["properties"]["startTime"] == "0001-01-01T00:00:00Z"
        assert call(rt, "Jobs_Get", "GET", name).status == 200
    assert record(rt, "yearly").next_execution_time == datetime(2027, 1, 1, tzinfo=UTC)
    clock.advance(timedelta(minutes=1))
    # The minutely job's first occurrence (the API left it to a dispatch task, not run here) and its next.
    assert Dispatcher(rt.store, clock).tick().enqueued == 2


class FailingAddOnce(DueIndex):
    """The due index of a storage account that refuses one write (a 503, a timeout, a crash)."""

    failed = False

    def add(self, job: JobKey, due: datetime, generation: int) -> None:
        if not self.failed:
            self.failed = True
            raise ServiceRequestError("storage unavailable")
        super().add(job, due, generation)

    def add_many(self, items: Iterable[tuple[JobKey, datetime, int]]) -> None:
        if not self.failed:
            self.failed = True
            raise ServiceRequestError("storage unavailable")
        super().add_many(items)


def test_a_failed_due_index_write_does_not_orphan_the_job(settings, clock: ManualClock, storage) -> None:
    """The dispatcher advanced the job's cursor before indexing the following occurrence; a fault in
    between left a job whose next occurrence no tick would ever read: it never ran again."""
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    start = datetime(2026, 3, 1, 12, 5, tzinfo=UTC)
    put(
        rt,
        "minutely",
        {"startTime": start.isoformat(), "action": http("http://127.0.0.1:9/"), "recurrence": {"frequency": "Minute"}},
    )
    flaky = replace(rt.store, due=FailingAddOnce(rt.store.due.table, rt.store.due.state, rt.store.due.shards))
    clock.current = start - timedelta(seconds=50)
    assert Dispatcher(flaky, clock).tick().enqueued == 0  # the fault is contained to its entry, and logged
    dispatched = []
    for _ in range(3):
        clock.advance(timedelta(minutes=1))
        Dispatcher(flaky, clock).tick()
        dispatched.append(record(rt, "minutely").dispatched_occurrence)
    assert dispatched[-1] == start + timedelta(minutes=3)


def test_retries_of_an_occurrence_outlive_the_completion_of_the_last_one(
    settings, clock: ManualClock, http_target, storage
) -> None:
    """count=2: occurrence 1 fails and retries past occurrence 2, which succeeds and completes the job.
    Occurrence 1's remaining retries were dropped ("not Enabled"): its retry policy was cut short, it never
    faulted, and faultedCount stayed 0."""
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    clock.current = T0 - timedelta(seconds=2)
    action = {**http(http_target.url), "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT40S", "retryCount": 2}}
    put(rt, "pair", {"startTime": T0.isoformat(), "action": action, "recurrence": {"frequency": "Minute", "count": 2}})
    job = record(rt, "pair")
    first = OccurrenceMessage(job.key, T0, T0, generation=job.generation)
    http_target.status = 500
    clock.current = T0
    rt.executor.run(first)
    clock.current = T0 + timedelta(seconds=40)
    rt.executor.run(first.retry(clock.current))
    Dispatcher(rt.store, clock).tick()  # queues occurrence 2 (T0 + 60 s), the last
    http_target.status = 200
    clock.current = T0 + timedelta(seconds=60)
    rt.executor.run(OccurrenceMessage(job.key, clock.current, clock.current, generation=job.generation))
    assert record(rt, "pair").state == JobState.COMPLETED
    http_target.status = 500
    clock.current = T0 + timedelta(seconds=80)
    rt.executor.run(first.retry(T0 + timedelta(seconds=40)).retry(clock.current))
    assert len(http_target.requests) == 4
    done = record(rt, "pair")
    assert (done.state, done.execution_count, done.failure_count, done.faulted_count) == (JobState.COMPLETED, 4, 3, 1)


def test_a_job_without_start_time_whose_end_time_passed_is_created_completed(runtime) -> None:
    make_collection(runtime)
    past = (datetime.now(UTC) - timedelta(days=1)).replace(microsecond=0)
    created = call(
        runtime,
        "Jobs_CreateOrUpdate",
        "PUT",
        "ended",
        {
            "properties": {
                "recurrence": {"frequency": "Hour", "endTime": past.isoformat()},
                "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
            }
        },
    )
    assert created.status == 201, created.body
    assert created.body["properties"]["state"] == "completed"


def test_host_files_are_not_time_zones(runtime) -> None:
    make_collection(runtime)
    for zone, status in (("localtime", 400), ("posixrules", 400), ("Europe/London", 201)):
        response = call(
            runtime,
            "Jobs_CreateOrUpdate",
            "PUT",
            "zoned",
            {
                "properties": {
                    "recurrence": {"frequency": "Day", "timeZone": zone},
                    "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
                }
            },
        )
        assert response.status == status, (zone, response.body)
