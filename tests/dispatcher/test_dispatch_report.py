"""What a tick or a dispatch task reports: each due entry counted for what became of it (queued, skipped,
stale, raced, failed), on the memory store; faults are injected at the job table's edge, per job."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from azure.core.exceptions import ServiceRequestError

from shared.dispatcher import Dispatcher, TickReport
from shared.keys import CollectionKey, JobKey
from shared.model import JobState
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.store import ConcurrencyError, JobStore
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain_dispatch, make_collection

ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


class FaultyJobs(JobStore):
    """The job table as one dispatcher sees it: per job, what goes wrong (set `faults[name]`). Reads and writes
    of several jobs at once read and write none, so every job goes alone and meets its own fault."""

    def __init__(self, inner: JobStore, rt: Runtime) -> None:
        self.__dict__.update(inner.__dict__)
        self.rt = rt
        self.faults: dict[str, str] = {}

    def get(self, key: JobKey) -> JobRecord | None:
        if self.faults.get(key.job) == "read fails":
            raise ServiceRequestError("storage unavailable")
        return super().get(key)

    def get_many(self, collection: CollectionKey, keys: list[JobKey]) -> dict[JobKey, JobRecord | None]:
        return {}

    def replace_many(self, records: list[JobRecord]) -> list[JobRecord | None]:
        return [None] * len(records)

    def replace(self, record: JobRecord) -> JobRecord:
        fault = self.faults.pop(record.key.job, None)
        if fault == "write fails":
            raise ServiceRequestError("storage unavailable")
        if fault == "a PATCH lands first":  # through the API, on the unfaulted store: a real rewrite
            patched = call(
                self.rt,
                "Jobs_Patch",
                "PATCH",
                record.key.job,
                {"properties": {"action": {"request": {"method": "POST"}}}},
            )
            assert patched.status == 200, patched.body
        written = super().replace(record)
        if fault == "the answer is lost":  # the write landed; the SDK's retry then saw the new ETag
            raise ConcurrencyError("precondition failed")
        return written


def _put(rt: Runtime, name: str, due: datetime) -> JobRecord:
    answer = call(
        rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": {"startTime": due.isoformat(), "action": ACTION}}
    )
    assert answer.status == 201, answer.body
    job = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
    assert job is not None
    return job


def _counts(report: TickReport) -> dict[str, int]:
    return {
        "queued": report.enqueued,
        "skipped": report.skipped,
        "stale": report.stale,
        "raced": report.raced,
        "failed": report.failed,
    }


def test_each_entry_is_counted_for_what_became_of_it(settings, clock: ManualClock, storage) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    due = clock.now().replace(second=0) + timedelta(minutes=2, seconds=10)  # beyond the API's fast path
    for name in ("plain", "lost-answer", "raced", "write-fails", "read-fails"):
        _put(rt, name, due)
    disabled = _put(rt, "disabled", due)
    # a stored state the dispatcher must not run: it only advances
    rt.store.jobs.replace(replace(disabled, state=JobState.DISABLED))
    rt.store.due.add(JobKey(SUB, RG, JC, "plain"), due + timedelta(seconds=5), 1)  # not the job's instant
    rt.store.due.add(JobKey(SUB, RG, JC, "deleted"), due, 1)  # no such job
    jobs = FaultyJobs(rt.store.jobs, rt)
    jobs.faults.update(
        {
            "lost-answer": "the answer is lost",
            "raced": "a PATCH lands first",
            "write-fails": "write fails",
            "read-fails": "read fails",
        }
    )
    clock.current = due - timedelta(minutes=1)  # the tick a minute ahead

    report = Dispatcher(replace(rt.store, jobs=jobs), clock).tick()

    # Raced: the job a PATCH rewrote, and the entry without a job, its instant ahead (its create may be in flight:
    # jobstate.awaits_its_write).
    assert _counts(report) == {"queued": 2, "skipped": 1, "stale": 1, "raced": 2, "failed": 2}
    # A failed entry stays and the next tick (here through the fanned-out tasks) dispatches it; a raced one
    # was re-planned by its own write (the PATCH left it to a dispatch task, which the drain runs too); the rest
    # is gone from the index.
    jobs.faults.clear()
    clock.advance(timedelta(seconds=20))
    dispatcher = Dispatcher(replace(rt.store, jobs=jobs), clock)
    assert dispatcher.fan_out().tasks > 0
    again = drain_dispatch(dispatcher)
    assert _counts(again) == {"queued": 3, "skipped": 0, "stale": 0, "raced": 1, "failed": 0}
    for name in ("plain", "lost-answer", "raced", "write-fails", "read-fails", "disabled"):
        job = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
        assert job is not None and job.next_execution_time is None, name  # one-shot jobs: advanced past it
    # The entry without a job is dropped once its instant is write_in_flight past: no create landed for it.
    clock.current = due + rt.settings.timings.write_in_flight
    assert _counts(Dispatcher(rt.store, clock).tick()) == {"stale": 1} | {
        k: 0 for k in ("queued", "skipped", "raced", "failed")
    }
    assert rt.store.due.entries(due.strftime("%Y%m%d%H%M")) == []
