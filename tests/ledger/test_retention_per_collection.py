"""Retention per collection (historyRetention, newer api-version): the newest maxEntriesPerJob of a job's
attempts and, apart, of its ledger, none older than maxAge, failed ones kept until failureMaxAge. On the memory
store: which rows a retention pass keeps is logic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, JobExecutionStatus, JobHistoryActionName
from shared.records import HistoryRecord
from shared.retention import Retention
from shared.runtime import Runtime
from shared.store.memory import MemoryStorage
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
OK, FAILED = JobExecutionStatus.COMPLETED, JobExecutionStatus.FAILED


def attempt(key: JobKey, at: datetime, status: JobExecutionStatus) -> HistoryRecord:
    return HistoryRecord(
        key=key,
        execution_id=f"x-{at.isoformat()}",
        expected_execution_time=at,
        start_time=at,
        end_time=at,
        action_name=JobHistoryActionName.MAIN_ACTION,
        status=status,
        message="m",
        occurrence=at,
    )


def test_each_collection_keeps_what_its_retention_says(settings, memory_storage: MemoryStorage) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    clock = ManualClock(now)
    rt = Runtime.create(settings, clock, storage=memory_storage)
    make_collection(rt)
    assert (
        call(
            rt,
            "JobCollections_Patch",
            "PATCH",
            body={
                "properties": {"historyRetention": {"maxEntriesPerJob": 3, "maxAge": "P1D", "failureMaxAge": "P10D"}}
            },
            query=NEWER,
        ).status
        == 200
    )
    assert (
        call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            "j",
            {
                "properties": {
                    "startTime": (now + timedelta(days=1)).isoformat(),
                    "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
                }
            },
        ).status
        == 201
    )
    key = JobKey(SUB, RG, JC, "j")
    rows = [(timedelta(hours=h), OK) for h in (1, 2, 3, 4)]  # the 4th newest goes: 3 are kept
    rows += [(timedelta(hours=5), FAILED), (timedelta(days=3), FAILED)]  # failures stay past the count and age
    rows += [(timedelta(days=2), OK), (timedelta(days=11), FAILED)]  # too old, and too old even for a failure
    for age, status in rows:
        rt.store.history.add(attempt(key, now - age, status), now - age)  # an attempt and its ledger row

    Retention(rt.store, clock).run()

    kept = [(now - e.start_time, e.status) for e in rt.store.history.page(key, None, 100)[0]]
    expected = [
        (timedelta(hours=1), OK),
        (timedelta(hours=2), OK),
        (timedelta(hours=3), OK),
        (timedelta(hours=5), FAILED),
        (timedelta(days=3), FAILED),
    ]
    assert kept == expected
    ledger = [(now - e.occurrence, e.status) for e in rt.store.history.ledger_page(key, None, None, None, 100)[0]]
    assert ledger == expected  # the ledger apart, by the same rule
