"""Retention against the real Azurite: history caps, age limits, finished jobs, old claims."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from shared.keys import JobKey
from shared.model import JobExecutionStatus, JobHistoryActionName, JobState
from shared.records import HistoryRecord
from shared.retention import Retention
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.support import history, job_status, make_collection, put_job
from tests.support.clock import ManualClock

ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


def add_history(rt: Runtime, key: JobKey, dues: list[datetime]) -> None:
    def add(index_due: tuple[int, datetime]) -> None:
        index, due = index_due
        rt.store.history.add(
            HistoryRecord(
                key=key,
                execution_id=f"exec-{index}",
                expected_execution_time=due,
                start_time=due,
                end_time=due,
                action_name=JobHistoryActionName.MAIN_ACTION,
                status=JobExecutionStatus.COMPLETED,
                message="ok",
                retry_count=0,
                repeat_count=index + 1,
            ),
            due,
        )

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(add, enumerate(dues)))


def finished_job(rt: Runtime, name: str, state: JobState, last_run: datetime) -> JobKey:
    record = put_job(rt, name, {"startTime": (rt.clock.now() + timedelta(days=1)).isoformat(), "action": ACTION})
    record = job_status(rt, name)
    record = rt.store.jobs.replace(replace(record, state=state, last_execution_time=last_run, execution_count=1))
    add_history(rt, record.key, [last_run])
    return record.key


def test_retention_caps_history_drops_old_entries_and_deletes_finished_jobs(settings: Settings) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    rt = Runtime.create(settings, ManualClock(now))
    make_collection(rt)
    busy = put_job(rt, "busy", {"startTime": (now + timedelta(days=1)).isoformat(), "action": ACTION}).key
    recent = [now - timedelta(minutes=10 * i) for i in range(1, 1051)]  # 1,050 within the last 8 days
    old = [now - timedelta(days=61, minutes=i) for i in range(5)]
    add_history(rt, busy, recent + old)
    record = job_status(rt, "busy")
    rt.store.jobs.replace(replace(record, execution_count=1055))
    quiet = put_job(rt, "quiet", {"startTime": (now + timedelta(days=1)).isoformat(), "action": ACTION}).key
    add_history(rt, quiet, [now - timedelta(days=1), now - timedelta(days=59), now - timedelta(days=70)])
    finished_job(rt, "completed-long-ago", JobState.COMPLETED, now - timedelta(days=61))
    finished_job(rt, "faulted-long-ago", JobState.FAULTED, now - timedelta(days=60, seconds=1))
    finished_job(rt, "completed-lately", JobState.COMPLETED, now - timedelta(days=59))

    report = Retention(rt.store, rt.clock).run()

    kept = history(rt, "busy")
    assert len(kept) == 1000 and [e.start_time for e in kept] == recent[:1000]  # the newest thousand
    assert [e.start_time for e in history(rt, "quiet")] == [now - timedelta(days=1), now - timedelta(days=59)]
    assert rt.store.jobs.get(busy.collection_key.job("completed-long-ago")) is None
    assert rt.store.jobs.get(busy.collection_key.job("faulted-long-ago")) is None
    assert history(rt, "completed-long-ago") == []
    assert job_status(rt, "completed-lately").state == JobState.COMPLETED
    assert len(history(rt, "completed-lately")) == 1
    assert (report.jobs, report.jobs_deleted, report.history_deleted) == (5, 2, 56)
    again = Retention(rt.store, rt.clock).run()
    assert (again.jobs, again.jobs_deleted, again.history_deleted) == (3, 0, 0)  # idempotent


def test_claims_are_kept_a_week(settings: Settings) -> None:
    now = datetime.now(UTC)
    clock = ManualClock(now)
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    key = put_job(rt, "claimed", {"startTime": (now + timedelta(days=1)).isoformat(), "action": ACTION}).key
    for attempt in range(3):
        claim = rt.store.claims.try_claim(key, f"exec|MainAction|{attempt}", now)
        assert claim is not None
        rt.store.claims.complete(claim)
    assert Retention(rt.store, clock).run().claims_deleted == 0
    clock.advance(timedelta(days=7, minutes=1))
    assert Retention(rt.store, clock).run().claims_deleted == 3
    assert rt.store.claims.try_claim(key, "exec|MainAction|0", clock.now()) is not None  # gone, so claimable
