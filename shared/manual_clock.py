"""`ManualClock`: a Clock (shared/clock.py) whose time moves only when its holder moves it, so a test drives every
window, lease, renewal and retry of the code under test without waiting for them. Tests and benchmarks only: it
lives beside the interface it fakes, and tests/clock/ holds it and SystemClock to the same contract.

Contract, beyond the Clock's:
- Time moves only by `advance(by)` or `advance_to(instant)`: `now()` and `monotonic()` move together, never back.
  Nothing that sleeps or waits on the clock wakes before then, however long real time passes.
- An advance wakes exactly the sleepers and waiters whose deadline it reaches (deadline <= the new monotonic time),
  in deadline order (then the order they began to wait), threads and coroutines alike, a coroutine on whatever
  loop it waits (woken through `loop.call_soon_threadsafe`). One advance is one jump: a loop that sleeps again
  after it woke counts from the new time, so a periodic step runs once per advance of at least its period.
- A `wait_for` whose predicate turns true (its condition notified) returns at once, without an advance.
- Its resolution is a nanosecond of monotonic time: a wait shorter than half of one moves monotonic time by that
  nanosecond and returns (`_tick`), so code that waits again for a float remainder never spins nor stalls.
- Setting `current` sets the wall time alone (as setting a machine's clock does): monotonic time and the sleepers'
  deadlines stay where they are.
- `waits`: a clock whose monotonic time, sleeps and waits this one hands on, only `now` then being moved by hand:
  what tests that pin the instant a decision sees, while the code under it runs in real time, need
  (tests/support/clock.py). None: every kind of time moves only by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .clock import Clock


@dataclass(order=True)
class _Sleeper:
    deadline: int  # monotonic nanoseconds on the manual clock
    seq: int
    wake: Callable[[], None] = field(compare=False)


class ManualClock:
    def __init__(self, start: datetime, waits: Clock | None = None) -> None:
        if start.tzinfo is None:
            raise ValueError("a clock's instants are timezone-aware")
        self._lock = threading.Lock()
        self._now = start
        self._elapsed = 0  # nanoseconds, so that advancing by a sleep's own seconds always reaches its deadline
        self._sleepers: list[_Sleeper] = []  # a heap: the next due first
        self._seq = itertools.count()
        self._waits = waits

    # -- what the code under test reads ---------------------------------------------------------------------------

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def monotonic(self) -> float:
        if self._waits is not None:
            return self._waits.monotonic()
        with self._lock:
            return self._elapsed / 1e9

    def sleep(self, seconds: float) -> None:
        if self._waits is not None:
            self._waits.sleep(seconds)
            return
        woken = threading.Event()
        sleeper = self._enter(seconds, woken.set)
        if sleeper is not None:
            woken.wait()

    async def pause(self, seconds: float) -> None:
        if self._waits is not None:
            await self._waits.pause(seconds)
            return
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # its loop closed meanwhile: nobody waits any more
                loop.call_soon_threadsafe(_resolve, woken)

        sleeper = self._enter(seconds, wake)
        if sleeper is None:
            await asyncio.sleep(0)
            return
        try:
            await woken
        finally:
            self._leave(sleeper)  # cancelled: it needs no wake any more

    def wait_for(self, condition: threading.Condition, predicate: Callable[[], bool], seconds: float) -> bool:
        if self._waits is not None:
            return self._waits.wait_for(condition, predicate, seconds)
        if predicate():
            return True
        passed = False

        def wake() -> None:
            nonlocal passed
            with condition:
                passed = True
                condition.notify_all()

        sleeper = self._enter(seconds, wake)
        if sleeper is None:
            return predicate()
        try:
            condition.wait_for(lambda: passed or predicate())
        finally:
            self._leave(sleeper)
        return predicate()

    # -- what the test does ---------------------------------------------------------------------------------------

    def advance(self, by: float | timedelta) -> None:
        """Move time forward `by` (seconds, or a timedelta) and wake what came due."""
        seconds = by.total_seconds() if isinstance(by, timedelta) else float(by)
        if seconds < 0:
            raise ValueError("a clock's time never goes back")
        with self._lock:
            self._now += timedelta(seconds=seconds)
            self._elapsed += _nanoseconds(seconds)
            due = self._take_due()
        for sleeper in due:  # outside the lock: a waiter takes its condition, and may read the clock under it
            sleeper.wake()

    def advance_to(self, instant: datetime) -> None:
        """Move time forward to `instant` (`now()` then answers it) and wake what came due."""
        with self._lock:
            seconds = (instant - self._now).total_seconds()
        self.advance(seconds)

    @property
    def current(self) -> datetime:
        return self.now()

    @current.setter
    def current(self, instant: datetime) -> None:
        if instant.tzinfo is None:
            raise ValueError("a clock's instants are timezone-aware")
        with self._lock:
            self._now = instant

    def sleepers(self) -> int:
        """How many sleep or wait on the clock now: a test's sign that the code under it reached its wait."""
        with self._lock:
            return len(self._sleepers)

    # -- the sleepers ---------------------------------------------------------------------------------------------

    def _enter(self, seconds: float, wake: Callable[[], None]) -> _Sleeper | None:
        """A sleeper due `seconds` from now, or None when that is not in the future (nothing to wait for)."""
        if seconds <= 0:
            return None
        wait = _nanoseconds(seconds)
        if wait == 0:
            self._tick()
            return None
        with self._lock:
            sleeper = _Sleeper(self._elapsed + wait, next(self._seq), wake)
            heapq.heappush(self._sleepers, sleeper)
            return sleeper

    def _tick(self) -> None:
        """A wait shorter than half the clock's nanosecond: what float arithmetic leaves of an interval that has
        passed (a deadline reckoned as `at - monotonic()`). It moves monotonic time by that nanosecond, so the code
        asking again sees its time has come: it neither spins on the clock nor stalls until the next advance."""
        with self._lock:
            self._elapsed += 1
            due = self._take_due()
        for sleeper in due:
            sleeper.wake()

    def _leave(self, sleeper: _Sleeper) -> None:
        with self._lock:
            if sleeper in self._sleepers:
                self._sleepers.remove(sleeper)
                heapq.heapify(self._sleepers)

    def _take_due(self) -> list[_Sleeper]:
        due: list[_Sleeper] = []
        while self._sleepers and self._sleepers[0].deadline <= self._elapsed:
            due.append(heapq.heappop(self._sleepers))
        return due


def _nanoseconds(seconds: float) -> int:
    """To the nearest, a sleep's and an advance's alike: an advance by a sleep's own seconds reaches its deadline,
    whatever float arithmetic left beyond a nanosecond's half in either."""
    return round(seconds * 1e9)


def _resolve(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)
