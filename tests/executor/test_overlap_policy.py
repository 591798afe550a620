"""The overlap policy through the real dispatcher, queue, executor, recorder and store (Azurite) and a real local
HTTP target: a job that takes 90 s every 60 s. Time is a hand-moved clock: the target holds each request until
the test says its 90 s are over (then moves the clock to that instant and lets it answer), so five occurrences
take seconds, not minutes. `Skip` runs at 0, 120, 240 and the ledger names the skipped ones; `BufferOne` runs
back to back (each waiter starts the instant the previous one ends); `Allow` overlaps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from shared.dispatcher import Dispatcher
from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, JobExecutionStatus, LedgerReason, WaitCause
from shared.records import LedgerEntry
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.peers.servers import Hit, Server, serve
from tests.executor.support import QueueTrigger
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TAKES = timedelta(seconds=90)
EVERY = timedelta(seconds=60)
OCCURRENCES = [T0 + k * EVERY for k in range(5)]  # 0, 60, 120, 180, 240
PATIENCE = 60.0  # seconds of real time for anything to happen on a busy machine
HEADER = "x-ms-scheduler-expected-execution-time"


@dataclass
class HoldingTarget:
    """A real local HTTP server that holds each request until `let_go(occurrence)`: the job's 90 s of work."""

    server: Server = field(init=False)
    gates: dict[str, threading.Event] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.server = serve(self._answer)

    def _answer(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        gate = self.gates.setdefault(hit.headers[HEADER], threading.Event())
        gate.wait(PATIENCE)
        return 200, {"Content-Type": "text/plain"}, b"done"

    def hits(self) -> list[str]:
        return [hit.headers[HEADER] for hit in list(self.server.hits)]

    def let_go(self, occurrence: str) -> None:
        self.gates.setdefault(occurrence, threading.Event()).set()


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def stamp(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def target() -> Iterator[HoldingTarget]:
    holding = HoldingTarget()
    yield holding
    for gate in holding.gates.values():
        gate.set()
    holding.server.close()


def run_scenario(settings: Settings, target: HoldingTarget, policy: str) -> tuple[dict[datetime, datetime], Runtime]:
    """The five occurrences of a 90 s job every 60 s under `policy`; when each run started (by occurrence)."""
    clock = ManualClock(T0 - timedelta(minutes=5))
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    body = {
        "properties": {
            "startTime": T0.isoformat(),
            "recurrence": {"frequency": "Minute", "interval": 1},
            "overlapPolicy": policy,
            "action": {
                "type": "Http",
                "request": {"uri": target.server.url, "method": "POST"},
                "retryPolicy": {"retryType": "None"},
            },
        }
    }
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "j", body, query=NEWER).status == 201
    key = JobKey(SUB, RG, JC, "j")
    trigger = QueueTrigger(rt)
    started: dict[datetime, datetime] = {}  # occurrence -> the (clock's) instant its request arrived
    ends: dict[datetime, datetime] = {}  # occurrence -> when its 90 s are over
    seen = 0
    try:
        upcoming = list(OCCURRENCES)
        while upcoming or ends:
            # Ends before occurrences of the same instant: the previous run ends, then the next one is due.
            end = min(ends.items(), key=lambda item: item[1]) if ends else None
            if end is not None and (not upcoming or end[1] <= upcoming[0]):
                occurrence, clock.current = end
                del ends[occurrence]
                target.let_go(stamp(occurrence))
                wait_until(
                    lambda o=occurrence: _status(rt, key, o) == JobExecutionStatus.COMPLETED, f"{occurrence} recorded"
                )
                if any(e.status == JobExecutionStatus.WAITING for e in _ledger(rt, key).values()):
                    wait_until(lambda s=seen: len(target.hits()) > s, "the waiting occurrence to start")
            else:
                due = upcoming.pop(0)
                job = rt.store.jobs.get(key)
                assert job is not None and job.next_execution_time == due
                clock.current = due - timedelta(seconds=3)
                Dispatcher(rt.store, clock).dispatch(job, due, clock.now())
                clock.current = due
                wait_until(lambda d=due: stamp(d) in target.hits() or _status(rt, key, d) is not None, f"{due} handled")
            for hit in target.hits()[seen:]:
                occurrence = datetime.strptime(hit, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
                started[occurrence] = clock.now()
                ends[occurrence] = clock.now() + TAKES
            seen = len(target.hits())
    finally:
        trigger.stop()
    return started, rt


def _ledger(rt: Runtime, key: JobKey) -> dict[datetime, LedgerEntry]:
    entries, _ = rt.store.history.ledger_page(key, None, None, None, 1000)
    return {entry.occurrence: entry for entry in entries}


def _status(rt: Runtime, key: JobKey, occurrence: datetime) -> JobExecutionStatus | None:
    found = _ledger(rt, key).get(occurrence)
    return found.status if found is not None else None


def offsets(started: dict[datetime, datetime]) -> list[int]:
    return sorted(int((at - T0).total_seconds()) for at in started.values())


def test_skip_runs_at_0_120_240_and_the_ledger_names_the_skipped(settings: Settings, target: HoldingTarget) -> None:
    started, rt = run_scenario(settings, target, "Skip")
    assert offsets(started) == [0, 120, 240]
    ledger = _ledger(rt, JobKey(SUB, RG, JC, "j"))
    for skipped in (OCCURRENCES[1], OCCURRENCES[3]):
        entry = ledger[skipped]
        assert entry.status == JobExecutionStatus.SKIPPED and entry.reason == LedgerReason.SKIPPED_BY_OVERLAP
        assert "was still running (overlapPolicy Skip)" in entry.message
    assert [ledger[o].status for o in (OCCURRENCES[0], OCCURRENCES[2], OCCURRENCES[4])] == [
        JobExecutionStatus.COMPLETED
    ] * 3
    job = rt.store.jobs.get(JobKey(SUB, RG, JC, "j"))
    assert job is not None and job.execution_count == 3
    assert [r.ref.occurrence for r in job.overlap.running] == []  # every run ended, nothing holds the job


def test_buffer_one_runs_back_to_back_and_one_waits_at_most(settings: Settings, target: HoldingTarget) -> None:
    started, rt = run_scenario(settings, target, "BufferOne")
    # 0 runs; 60 waits and starts as 0 ends (90); 120 waits, starts at 180; 180 waits, starts at 270;
    # 240 comes while 180 already waits: skipped.
    assert {int((o - T0).total_seconds()): int((s - T0).total_seconds()) for o, s in started.items()} == {
        0: 0,
        60: 90,
        120: 180,
        180: 270,
    }
    ledger = _ledger(rt, JobKey(SUB, RG, JC, "j"))
    assert ledger[OCCURRENCES[4]].reason == LedgerReason.SKIPPED_BY_OVERLAP
    assert "another one already waited (overlapPolicy BufferOne)" in ledger[OCCURRENCES[4]].message
    waited = ledger[OCCURRENCES[1]]
    assert waited.status == JobExecutionStatus.COMPLETED and waited.waited_for == WaitCause.PREVIOUS
    assert waited.waited == timedelta(seconds=30)  # came at 60, started at 90
    assert ledger[OCCURRENCES[0]].waited is None


def test_allow_overlaps(settings: Settings, target: HoldingTarget) -> None:
    started, rt = run_scenario(settings, target, "Allow")
    assert offsets(started) == [0, 60, 120, 180, 240]
    ledger = _ledger(rt, JobKey(SUB, RG, JC, "j"))
    assert all(entry.status == JobExecutionStatus.COMPLETED for entry in ledger.values()) and len(ledger) == 5
