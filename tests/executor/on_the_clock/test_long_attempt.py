"""An attempt that outlives its claim's lease runs once: its runner renews the lease (and hides its watchdog)
while the action runs, so neither a duplicate delivery nor the watchdog takes the attempt over.

The memory store and a ManualClock (tests/support/manual_time.py): the leases, renewals and watchdog are ours, so
the clock moves in small steps while the threads run. A real local HTTP target holds the action's request until
the test releases it, once the clock has passed the claim's lease + the takeover's wait + a margin
(shared/timings.py): were the renewal broken, a duplicate arriving just after the first lease ran out would take
the attempt over (after watching it unrenewed for the takeover's wait) while the first action still runs, and the
target would see two requests. No real delay: the action is "long" on the clock only.
A second runtime on the same memory storage and clock plays a second host polling the same queue.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from functools import partial

import pytest
from azure.storage.queue import QueueMessage

from shared.keys import JobKey
from shared.manual_clock import ManualClock
from shared.occurrence import OccurrenceBatch
from shared.runtime import Runtime
from shared.store.claims import claim_partition, claim_row
from shared.store.memory import MemoryStorage
from shared.store.tables import as_datetime
from shared.timings import Timings
from tests.executor.peers.servers import Hit, ok, serve
from tests.executor.support import history, job_status, make_collection, put_job
from tests.support.manual_time import runtime_in_memory, step_until, until

TIMINGS = Timings()  # runtime_in_memory's
# Only as long as a broken renewal needs to show: the takeover's wait ends before the action does.
ACTION_SECONDS = (TIMINGS.claim_lease + TIMINGS.takeover_wait).total_seconds() + 2.0
STEP = 0.1  # clock seconds per step: a renewal's 4 s of slack before its lease ends are 40 steps of real time


class SecondHost:
    """Polls the occurrence queue like another host: each visible message runs on its own thread."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.delivered: list[str] = []
        self.errors: list[BaseException] = []
        self.polls = 0  # looks at the queue so far
        self._stop = threading.Event()
        self._runs: list[threading.Thread] = []
        self._poller = threading.Thread(target=self._poll, daemon=True)
        self._poller.start()

    def _poll(self) -> None:
        client = self.rt.store.queue.client
        while not self._stop.is_set():
            for message in client.receive_messages(max_messages=32, visibility_timeout=600):
                self.delivered.append(message.id)
                run = threading.Thread(target=self._run, args=(message,), daemon=True)
                self._runs.append(run)
                run.start()
            self.polls += 1
            self._stop.wait(0.2)

    def _run(self, message: QueueMessage) -> None:
        try:
            self.rt.executor.handle(message.content, message.id)
            self.rt.store.queue.client.delete_message(message)
        except BaseException as error:  # reported by the test
            self.errors.append(error)

    def stop(self) -> None:
        self._stop.set()
        self._poller.join(10)
        for run in self._runs:
            run.join(30)

    def next_poll(self) -> bool:
        """Whether the host looked at the queue again (in real time): what it would receive by now, it has."""
        seen = self.polls
        return until(lambda: self.polls > seen)


class HeldTarget:
    """A local HTTP target that holds every request until `release()`, then answers 200."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.server = serve(self._answer)
        self.url = self.server.url
        self.hits = self.server.hits

    def _answer(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        self.released.wait(60)
        return ok(hit)

    def release(self) -> None:
        self.released.set()


@pytest.fixture
def slow_target() -> Iterator[HeldTarget]:
    target = HeldTarget()
    yield target
    target.release()
    target.server.close()


@pytest.fixture
def first(clock: ManualClock, shared_storage: MemoryStorage) -> Iterator[Runtime]:
    with runtime_in_memory(clock, shared_storage) as runtime:
        yield runtime


@pytest.fixture
def other(clock: ManualClock, shared_storage: MemoryStorage) -> Iterator[Runtime]:
    with runtime_in_memory(clock, shared_storage) as runtime:
        yield runtime


def _step_to(clock: ManualClock, instant: datetime) -> None:
    """The clock moved a step at a time, the threads let run after each, up to `instant`."""
    step_until(clock, lambda: clock.now() >= instant, STEP, most=1000)


def _held_job(rt: Runtime, clock: ManualClock, target: HeldTarget, name: str) -> tuple[datetime, QueueMessage]:
    """A one-shot Http job due 3 s ahead at the held target, and its occurrence's message as the host receives it
    (within the API's fast path, the API queued it)."""
    make_collection(rt)
    due = clock.now().replace(microsecond=0) + timedelta(seconds=3)
    request = {"uri": target.url, "method": "POST", "body": "x"}
    put_job(
        rt,
        name,
        {
            "startTime": due.isoformat(),
            "action": {"type": "Http", "request": request, "retryPolicy": {"retryType": "None"}},
        },
    )
    [message] = list(rt.store.queue.client.receive_messages(visibility_timeout=600))
    return due, message


def _run(rt: Runtime, message: QueueMessage) -> tuple[threading.Thread, list[BaseException]]:
    """The first host's delivery of `message`, started on a thread; what it raised, for the test to report."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            rt.executor.handle(message.content, message.id)
        except BaseException as error:  # reported by the test
            errors.append(error)

    runner = threading.Thread(target=run)
    runner.start()
    return runner, errors


def _lease(rt: Runtime, job: JobKey, claim_id: str) -> datetime:
    row = rt.store.claims.table.get(claim_partition(job), claim_row(job, claim_id))
    assert row is not None
    lease = as_datetime(row["LeaseUntil"])
    assert lease is not None
    return lease


def _renewed(rt: Runtime, job: JobKey, claim_id: str, seen: datetime) -> bool:
    return _lease(rt, job, claim_id) != seen


def _period(gap: int) -> float:
    """The seconds expected between a held batch's renewals `gap` and `gap + 1` (0: its first and second)."""
    every, most = TIMINGS.renew_every.total_seconds(), TIMINGS.renew_most.total_seconds()
    return min(every * 2**gap, most)


def _overdue(leases: list[tuple[datetime, datetime]], now: datetime) -> bool:
    """Whether the next renewal is due by now at the latest: a poll of the renewer past its period."""
    if len(leases) < 2:  # the claim's own lease, not renewed yet: when the first renewal comes is not measured
        return False
    latest = leases[-1][0] + timedelta(seconds=_period(len(leases) - 2)) + TIMINGS.renewer_poll
    return now >= latest


def test_an_attempt_longer_than_its_lease_runs_once_despite_duplicates_and_its_watchdog(
    first: Runtime, other: Runtime, clock: ManualClock, slow_target: HeldTarget
) -> None:
    due, message = _held_job(first, clock, slow_target, "long")
    claim_id = OccurrenceBatch.from_json(message.content).items[0].claim_id

    runner, runner_errors = _run(first, message)
    second = SecondHost(other)
    try:
        step_until(clock, lambda: len(slow_target.hits) == 1, STEP, most=1000)  # at its second: held
        held_at = clock.now()
        # Duplicates of the occurrence (a re-dispatch) reach the other host while the action runs: one
        # under the first lease, one just after that lease would have run out without its renewals.
        _step_to(clock, due + timedelta(seconds=2))
        first.store.queue.client.send_message(message.content)
        _step_to(clock, due + TIMINGS.claim_lease + timedelta(seconds=0.5))
        first.store.queue.client.send_message(message.content)
        _step_to(clock, held_at + timedelta(seconds=ACTION_SECONDS))
        slow_target.release()
        step_until(clock, lambda: not runner.is_alive(), STEP, most=1000)
        first.store.queue.client.delete_message(message)  # the host deletes a message that succeeded
        # A watchdog left behind turns visible `watchdog_after` past the last renewal, which came at most
        # `renew_every` before the end: the second host, still polling, would receive it by then.
        _step_to(clock, clock.now() + TIMINGS.watchdog_after + timedelta(seconds=1))
        assert second.next_poll()
    finally:
        slow_target.release()
        second.stop()
        runner.join(30)

    assert not runner_errors and not second.errors, (runner_errors, second.errors)
    assert len(slow_target.hits) == 1
    assert len(second.delivered) == 2, second.delivered  # the two duplicates; the watchdog never turned visible
    job = job_status(first, "long")
    assert (job.execution_count, job.failure_count) == (1, 0)
    assert claim_id in job.recent_claims
    [entry] = history(first, "long")
    assert entry.retry_count == 0 and entry.end_time - entry.start_time >= timedelta(seconds=ACTION_SECONDS)
    assert first.store.queue.client.get_queue_properties().approximate_message_count == 0  # watchdog deleted


def test_a_batch_held_long_is_renewed_ever_less_often_and_its_lease_never_lapses(
    first: Runtime, other: Runtime, clock: ManualClock, slow_target: HeldTarget
) -> None:
    # Renewing every held claim every `renew_every` was a fifth of the executor's CPU under a backlog (leases.py
    # `_period`): the periods double up to `renew_most`, and each lease still outlasts its period.
    _, message = _held_job(first, clock, slow_target, "held")
    item = OccurrenceBatch.from_json(message.content).items[0]
    runner, runner_errors = _run(first, message)
    second = SecondHost(other)  # would receive the watchdog, were it to show while the attempt is held
    leases: list[tuple[datetime, datetime]] = []  # (when seen, the lease seen) at each change
    waited_on: datetime | None = None  # the lease whose renewal the clock last waited for
    try:
        step_until(clock, lambda: len(slow_target.hits) == 1, STEP, most=1000)
        held_until = clock.now() + timedelta(seconds=30)
        while clock.now() < held_until:
            lease = _lease(first, item.job, item.claim_id)
            assert lease > clock.now(), "the lease lapsed while its runner held it"
            if not leases or leases[-1][1] != lease:
                leases.append((clock.now(), lease))
            elif _overdue(leases, clock.now()) and waited_on != lease:
                # The clock waits (in real time, once a lease) for a renewal that is due: a renewer thread that a
                # busy machine runs late is read at the instant it renewed, not as a renewal late on the clock. Had
                # it not come, the clock moves on and the gap below shows it.
                waited_on = lease
                until(partial(_renewed, first, item.job, item.claim_id, lease), within=10)
                continue
            _step_to(clock, clock.now() + timedelta(seconds=STEP))
        slow_target.release()
        step_until(clock, lambda: not runner.is_alive(), STEP, most=1000)
    finally:
        slow_target.release()
        second.stop()
        runner.join(30)
    renewed_at = [seen for seen, _ in leases[1:]]  # the first is the claim's own lease
    gaps = [(b - a).total_seconds() for a, b in zip(renewed_at, renewed_at[1:], strict=False)]
    periods = [_period(n) for n in range(len(gaps))]  # 2, 4, 8, 8 (renewed every 2 s before)
    late = TIMINGS.renewer_poll.total_seconds() + 2 * STEP  # a renewal comes up to a poll and a step late
    # The first renewal is read when the clock sees it, not held for (when it is due is not measured): a busy
    # machine's renewer seen a step late shortens the first gap by as much (1.9 s once), so only its upper bound
    # holds; every later renewal is read at its own instant.
    assert len(gaps) >= 4 and gaps[0] <= periods[0] + late, gaps
    assert all(p <= g <= p + late for p, g in zip(periods[1:], gaps[1:], strict=True)), gaps
    assert not runner_errors and not second.errors, (runner_errors, second.errors)
    assert len(second.delivered) == 0, second.delivered  # the watchdog stayed hidden
    assert len(slow_target.hits) == 1
