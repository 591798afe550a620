"""Driving code on a ManualClock (shared/manual_clock.py) from a test: the clock's time moves only when the test
moves it; real time only lets the code's threads and event loops run, never lets the clock's time pass.

- `until(condition, within)`: whether `condition` holds within `within` seconds of real time.
- `step_until(clock, condition)`: the clock advanced in small steps, threads let run after each, until `condition`
  holds: what takes an executor through its short gathering windows up to the moment a test watches. The steps
  stop as soon as it holds, so no clock time passes after it.
- fixtures `manual_clock` (as `clock`, at START) and `manual_runtime` (as `rt`, `runtime_in_memory` on it), for
  a module or conftest that imports them.
- `runtime_in_memory(clock, storage)`: a Runtime on the memory store on that clock (no Azurite, no account), closed
  after; given the `MemoryStorage` of another (on the same clock), a second host of the same deployment.
- `on_the_clock(clock, work)`: `work()` (an executor's `handle`, say) run on a thread of its own while the clock
  moves in steps, until it returns: its answer, or its exception raised in the test.
- `HostTrigger(rt)`: the queue trigger as the host plays it, a look at a time or (`start()`) on a thread of its own
  while the test moves the clock; `drain_on_the_clock(rt, clock, until)` plays it while the clock moves in steps:
  what `drain` (tests/support/scheduler_client.py) does on Azurite in real time.
- `in_its_time(clock, work)`: `on_the_clock` when `clock` is a ManualClock, else `work()` as it is (real
  time passes by itself): one test body for a deployment in memory and one on Azurite; `drain_in_its_time(rt,
  until)` likewise `drain_on_the_clock` or `drain`.
A step moves the clock `step` seconds after letting threads run RUN real seconds: the code under test sees its
time pass step / RUN times faster than real time at most (5 x for a step of 0.1 s), so a deadline it must meet
(a renewal before a lease ends) keeps that share of its real slack.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TypeVar

import pytest
from azure.storage.queue import QueueMessage

from shared.clock import Clock
from shared.manual_clock import ManualClock
from shared.private_targets import PrivateTargets
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store.memory import MemoryStorage
from shared.store.sealing import new_key_material
from shared.timings import Timings
from tests.support.scheduler_client import drain

RUN = 0.02  # real seconds a step lets threads run
START = datetime.fromisoformat("2026-03-01T12:00:30+00:00")  # where the tests' manual clocks start
HOST_VISIBILITY = 600  # seconds a received message stays hidden: the Functions host's ten minutes

T = TypeVar("T")


def until(condition: Callable[[], bool], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def step_until(clock: ManualClock, condition: Callable[[], bool], step: float = 0.05, most: int = 200) -> None:
    for _ in range(most):
        time.sleep(RUN)
        if condition():
            return
        clock.advance(step)
    raise AssertionError(f"not reached within {most} steps of {step} s")


@contextmanager
def runtime_in_memory(
    clock: ManualClock, storage: MemoryStorage | None = None, timings: Timings | None = None
) -> Iterator[Runtime]:
    settings = Settings(
        storage=StorageSettings(),  # no account: nothing may reach for one
        private_targets=PrivateTargets.parse("loopback"),  # the tests' targets listen on loopback
        secret_keys=new_key_material(),
        dispatch_spread=timedelta(0),
        timings=timings or Timings(),
    )
    rt = Runtime.create(settings, clock, storage=storage or MemoryStorage(clock))
    try:
        yield rt
    finally:
        rt.close()


@pytest.fixture(name="clock")
def manual_clock() -> ManualClock:
    """A test's ManualClock at START (a fixture: a module or conftest imports it to use it as `clock`)."""
    return ManualClock(START)


@pytest.fixture(name="rt")
def manual_runtime(clock: ManualClock) -> Iterator[Runtime]:
    """A deployment on the memory store, on `clock` (a fixture: imported with `manual_clock`, used as `rt`)."""
    with runtime_in_memory(clock) as runtime:
        yield runtime


def on_the_clock(clock: ManualClock, work: Callable[[], T], step: float = 0.1, most: int = 2000) -> T:
    answers: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            answers.append(work())
        except BaseException as error:  # raised in the test below
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    step_until(clock, lambda: not thread.is_alive(), step, most)
    if errors:
        raise errors[0]
    return answers[0]


class HostTrigger:
    """The occurrence queue's trigger as the Functions host plays it: each `look()` hands every visible message to
    the executor on a thread of its own (the host starts every message at once) and deletes it once handled;
    `start()` looks every RUN of real time on a thread of its own until `stop()`, while the test moves the clock.
    `errors`: what handlers raised (the host would deliver their messages again: no test here expects that)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.handled = 0
        self.errors: list[BaseException] = []
        self._running: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._looker: threading.Thread | None = None

    def look(self) -> int:
        """Hand over what is visible now; how many messages that was."""
        with self._lock:
            received = list(
                self.rt.store.queue.client.receive_messages(max_messages=32, visibility_timeout=HOST_VISIBILITY)
            )
            for message in received:
                self._running.append(threading.Thread(target=self._handle, args=(message,), daemon=True))
                self._running[-1].start()
            self.handled += len(received)
        return len(received)

    def busy(self) -> bool:
        """Whether a handler runs (a message received by a look is being handled)."""
        with self._lock:
            self._running = [thread for thread in self._running if thread.is_alive()]
            return bool(self._running)

    def idle(self) -> bool:
        """No handler runs and no message is visible: a look now would hand nothing over."""
        with self._lock:
            self._running = [thread for thread in self._running if thread.is_alive()]
            return not self._running and not list(self.rt.store.queue.client.peek_messages(max_messages=1))

    def raise_errors(self) -> None:
        if self.errors:
            raise self.errors[0]

    def start(self) -> HostTrigger:
        self._looker = threading.Thread(target=self._look_until_stopped, daemon=True)
        self._looker.start()
        return self

    def stop(self) -> None:
        """No more looks; handlers still running are left to end (or to wait for a clock nobody moves)."""
        self._stopped.set()
        if self._looker is not None:
            self._looker.join(10)

    def _look_until_stopped(self) -> None:
        while not self._stopped.wait(RUN):
            self.look()

    def _handle(self, message: QueueMessage) -> None:
        try:
            self.rt.executor.handle(message.content, message.id, message.dequeue_count)
            self.rt.store.queue.client.delete_message(message)
        except BaseException as error:  # raise_errors raises it in the test
            self.errors.append(error)


def drain_on_the_clock(
    rt: Runtime, clock: ManualClock, until: Callable[[], bool], step: float = 0.1, most: int = 2000
) -> int:
    """Look at the queue (a HostTrigger's `look`), let the threads run, move the clock a step; until a look finds
    nothing, no handler runs and `until()` holds. How many messages it handled; a handler's error is raised here."""
    trigger = HostTrigger(rt)
    for _ in range(most):
        received = trigger.look()
        time.sleep(RUN)
        trigger.raise_errors()
        if not received and not trigger.busy() and until():
            return trigger.handled
        clock.advance(step)
    raise AssertionError(f"not drained within {most} steps of {step} s")


def in_its_time(clock: Clock, work: Callable[[], T]) -> T:
    return on_the_clock(clock, work) if isinstance(clock, ManualClock) else work()


def drain_in_its_time(rt: Runtime, until: Callable[[], bool], seconds: float = 60.0) -> int:
    if isinstance(rt.clock, ManualClock):
        return drain_on_the_clock(rt, rt.clock, until)
    return drain(rt, seconds, until=until)
