"""The executor and its recorder on the runtime's clock (a ManualClock, on the memory store): an attempt fires at
its second of that clock and not before; the recorder writes its window once `record_window` has passed on the
clock, however long real time waits; a retry it queues turns visible after its delay on the clock; and
Runtime.close() ends the recorder's writer, even mid-window, failing the attempt it held rather than leaving its
batch waiting for ever.

Real time here only lets threads run (tests/support/manual_time.py); the clock's time passes only by advance."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from shared.manual_clock import ManualClock
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from tests.executor.peers.servers import Server, serve
from tests.executor.support import fixed, history, http, job_status, make_collection, put_job
from tests.support.manual_time import runtime_in_memory, step_until, until

RUN = 0.5  # real seconds that let the threads run: longer than the 0.2 s record window, were it real


@pytest.fixture
def rt(clock: ManualClock) -> Iterator[Runtime]:
    with runtime_in_memory(clock) as runtime:
        make_collection(runtime)
        yield runtime


@pytest.fixture
def failing() -> Iterator[Server]:
    server = serve(lambda hit: (500, {}, b"down"))
    yield server
    server.close()


class Run:
    """A batch of one job's occurrence due at `due`, run by the executor on a thread of its own."""

    def __init__(self, rt: Runtime, name: str, due: datetime) -> None:
        job = job_status(rt, name)
        batch = OccurrenceBatch((OccurrenceMessage(job.key, due, due, generation=job.generation),))
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(rt, batch), daemon=True)
        self.thread.start()

    def _run(self, rt: Runtime, batch: OccurrenceBatch) -> None:
        try:
            rt.executor.run(batch)
        except BaseException as error:
            self.error = error

    def ended(self) -> bool:
        self.thread.join(5)
        return not self.thread.is_alive()


def held(clock: ManualClock) -> None:
    """Returns once the recorder holds the attempt that answered: two wait on the clock, the guard's renewer loop
    and the recorder's window (its time is the clock's when the answer came: no advance came since)."""
    assert until(lambda: clock.sleepers() == 2)


def job(rt: Runtime, clock: ManualClock, name: str, target: Server, retry_after: float | None = None) -> None:
    start = (clock.now() + timedelta(days=1)).isoformat()  # the API queues nothing of its own
    put_job(rt, name, {"startTime": start, "action": http(target.url)}, retry=fixed(retry_after or 60, 1))


def test_an_attempt_fires_at_its_second_on_the_clock_and_not_before(rt: Runtime, clock: ManualClock, target) -> None:
    job(rt, clock, "at-its-second", target)
    due = clock.now() + timedelta(seconds=5)  # within `early_hop`: it waits here rather than going back to the queue
    run = Run(rt, "at-its-second", due)
    step_until(clock, lambda: clock.monotonic() >= 1)  # its reads and claims gathered, waiting for its second
    time.sleep(RUN)
    assert target.hits == []
    clock.advance_to(due)
    step_until(clock, lambda: len(target.hits) == 1)
    step_until(clock, lambda: job_status(rt, "at-its-second").execution_count == 1)
    assert run.ended() and run.error is None
    assert history(rt, "at-its-second")[0].start_time >= due


def test_the_recorder_writes_once_its_window_has_passed_on_the_clock(rt: Runtime, clock: ManualClock, target) -> None:
    job(rt, clock, "recorded", target)
    run = Run(rt, "recorded", clock.now())
    step_until(clock, lambda: len(target.hits) == 1)
    held(clock)  # answered: the recorder's window runs from this clock time on
    window = rt.settings.timings.record_window.total_seconds()
    clock.advance(window / 2)
    time.sleep(RUN)
    assert job_status(rt, "recorded").execution_count == 0 and history(rt, "recorded") == []
    clock.advance(window / 2)
    assert until(lambda: job_status(rt, "recorded").execution_count == 1)
    assert len(history(rt, "recorded")) == 1
    assert run.ended() and run.error is None


def test_a_retry_turns_visible_on_the_memory_queue_after_its_delay_on_the_clock(
    rt: Runtime, clock: ManualClock, failing: Server
) -> None:
    job(rt, clock, "retried", failing, retry_after=30)
    run = Run(rt, "retried", clock.now())
    step_until(clock, lambda: len(failing.hits) == 1)
    held(clock)
    answered = clock.now()
    clock.advance(rt.settings.timings.record_window)
    assert until(lambda: job_status(rt, "retried").failure_count == 1)
    assert run.ended() and run.error is None  # its watchdog and backstop deleted: only the retry is queued
    queue = rt.store.queue.client
    visible_at = answered + timedelta(seconds=30) - rt.settings.timings.early_visibility
    clock.advance_to(visible_at - timedelta(seconds=1))
    assert queue.peek_messages(max_messages=32) == []
    clock.advance(1)
    (message,) = queue.peek_messages(max_messages=32)
    (retry,) = OccurrenceBatch.from_json(message.content).items
    assert (retry.attempt, retry.due) == (1, answered + timedelta(seconds=30))


def test_closing_the_runtime_ends_the_recorder_mid_window_and_fails_what_it_held(
    clock: ManualClock, target: Server
) -> None:
    with runtime_in_memory(clock) as rt:
        make_collection(rt)
        job(rt, clock, "held", target)
        run = Run(rt, "held", clock.now())
        step_until(clock, lambda: len(target.hits) == 1)
        held(clock)
        assert _recorders(rt) == 1
        rt.close()
        assert until(lambda: _recorders(rt) == 0)  # the clock never moved: only the close ended its window
        assert run.ended() and run.error is not None  # its batch learned of it, and comes back by its copies
        assert job_status(rt, "held").execution_count == 0


def _recorders(rt: Runtime) -> int:
    """The runtime's recorder threads alive (those of other tests' runtimes, never closed, are not its)."""
    return sum(
        1 for thread in threading.enumerate() if thread.name == f"{rt.threads.name}-recorder" and thread.is_alive()
    )
