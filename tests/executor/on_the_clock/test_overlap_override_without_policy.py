"""An overlap override (`?overlapPolicy=` on backfill and run-now, newer api-version) applies whatever the job's
stored policy is: on a job without one (Allow), the occurrences the request queues keep the overlap marker, so
BufferOne never has two of them at the target at once and Skip skips the one that comes while another runs.

Through the real API, store, queue and executor (the queue trigger played on threads, as the host does) and a real
local HTTP target that takes TAKES seconds of the clock to answer, on the memory store and a ManualClock
(tests/support/manual_time.py): the backfill's seconds and the overlap marker are ours, so the clock moves in steps
while the trigger runs, and the target holds each answer until the clock has moved TAKES past its arrival (its
thread sleeps on the clock: no real delay).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest

from shared.keys import JobKey
from shared.manual_clock import ManualClock
from shared.model import PREVIEW_API_VERSION, JobExecutionStatus, LedgerReason
from shared.occurrence import Trigger
from shared.records import LedgerEntry
from shared.runtime import Runtime
from tests.executor.peers.servers import Hit, Server, serve
from tests.support.manual_time import HostTrigger, step_until
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
NAME = "j"
KEY = JobKey(SUB, RG, JC, NAME)
TAKES = 2.0  # seconds of the clock the target takes to answer
BACKFILLED = 4  # occurrences a backfill queues, one second apart
STEP = 0.1  # clock seconds per step
STEPS = 1000  # at most, per wait


@dataclass
class SlowTarget:
    """A real local HTTP server that answers TAKES seconds of `clock` after a request came and counts the requests
    it holds at once."""

    clock: ManualClock
    server: Server = field(init=False)
    in_flight: int = 0
    most: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.server = serve(self._answer)

    def _answer(self, _: Hit) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        self.clock.sleep(TAKES)
        with self.lock:
            self.in_flight -= 1
        return 200, {"Content-Type": "text/plain"}, b"done"


@pytest.fixture
def target(clock: ManualClock) -> Iterator[SlowTarget]:
    slow = SlowTarget(clock)
    yield slow
    clock.advance(TAKES)  # what it still holds answers, so its server closes
    slow.server.close()


def z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def put_job_without_policy(rt: Runtime, url: str, end: datetime) -> None:
    """A job with no overlapPolicy (Allow) that ran each of the BACKFILLED minutes before `end` (a whole minute, not
    later than now) and runs next an hour after the first of them: nothing scheduled comes while a test runs."""
    minutes = sorted({(end - timedelta(minutes=k)).minute for k in range(1, BACKFILLED + 1)})
    body = {
        "properties": {
            "startTime": (end - timedelta(hours=2)).isoformat(),
            "recurrence": {"frequency": "Hour", "interval": 1, "schedule": {"minutes": minutes}},
            "action": {"type": "Http", "request": {"uri": url, "method": "POST"}, "retryPolicy": {"retryType": "None"}},
        }
    }
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", NAME, body, query=NEWER).status == 201
    job = rt.store.jobs.get(KEY)
    assert job is not None and job.properties.overlap_policy is None


def ledger(rt: Runtime, trigger: Trigger) -> list[LedgerEntry]:
    entries, _ = rt.store.history.ledger_page(KEY, None, None, None, 100)
    return [e for e in entries if e.trigger == trigger.value]


def ended(entry: LedgerEntry) -> bool:
    return entry.status in (JobExecutionStatus.COMPLETED, JobExecutionStatus.FAILED, JobExecutionStatus.SKIPPED)


def test_a_buffer_one_backfill_of_a_job_without_a_policy_never_has_two_at_the_target(
    rt: Runtime, clock: ManualClock, target: SlowTarget
) -> None:
    make_collection(rt)
    end = clock.now().replace(second=0, microsecond=0)
    put_job_without_policy(rt, target.server.url, end)
    query = {**NEWER, "overlapPolicy": "BufferOne"}
    interval = {"from": z(end - timedelta(minutes=BACKFILLED)), "to": z(end)}
    answer = call(rt, "Jobs_Backfill", "POST", NAME, interval, query=query)
    assert answer.status == 200, answer.body
    assert len(answer.body["value"]) == BACKFILLED  # queued one second apart, each taking TAKES seconds
    host = HostTrigger(rt).start()
    try:
        step_until(  # the four backfilled occurrences to end
            clock,
            lambda: len([e for e in ledger(rt, Trigger.BACKFILL) if ended(e)]) == BACKFILLED and target.in_flight == 0,
            STEP,
            STEPS,
        )
    finally:
        host.stop()
    host.raise_errors()
    assert target.most == 1
    entries = ledger(rt, Trigger.BACKFILL)
    completed = [e for e in entries if e.status == JobExecutionStatus.COMPLETED]
    skipped = [e for e in entries if e.status == JobExecutionStatus.SKIPPED]
    # One ran and one waited; one that came while one ran and one waited was skipped (how many depends on when
    # each ended: 3 and 1 on time, 2 and 2 when the machine held them back to the same moment).
    assert len(completed) + len(skipped) == BACKFILLED and len(completed) >= 2 and len(skipped) >= 1
    assert all(e.reason == LedgerReason.SKIPPED_BY_OVERLAP for e in skipped)
    assert len(target.server.hits) == len(completed)
    job = rt.store.jobs.get(KEY)
    assert job is not None and not job.overlap  # nothing runs or waits any more


def test_a_skip_run_now_of_a_job_without_a_policy_is_skipped_while_an_earlier_one_runs(
    rt: Runtime, clock: ManualClock, target: SlowTarget
) -> None:
    make_collection(rt)
    put_job_without_policy(rt, target.server.url, clock.now().replace(second=0, microsecond=0))
    query = {**NEWER, "overlapPolicy": "Skip"}
    host = HostTrigger(rt).start()
    try:
        assert call(rt, "Jobs_Run", "POST", NAME, None, query=query).status == 200
        step_until(clock, lambda: target.in_flight == 1, STEP, STEPS)  # the first run-now at the target
        # A run-now's identity is its second: the next one is another occurrence (the first still held).
        later = clock.now() + timedelta(seconds=1.1)
        step_until(clock, lambda: clock.now() >= later, STEP, STEPS)
        assert call(rt, "Jobs_Run", "POST", NAME, None, query=query).status == 200
        step_until(  # both run-now occurrences to end
            clock,
            lambda: len([e for e in ledger(rt, Trigger.RUN_NOW) if ended(e)]) == 2 and target.in_flight == 0,
            STEP,
            STEPS,
        )
    finally:
        host.stop()
    host.raise_errors()
    assert len(target.server.hits) == 1
    statuses = sorted((e.status.value, e.reason.value if e.reason else "") for e in ledger(rt, Trigger.RUN_NOW))
    assert statuses == [("Completed", ""), ("Skipped", "SkippedByOverlap")]
