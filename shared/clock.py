"""The one source of time: "now", elapsed time, sleeps and timed waits, injectable so tests and benchmarks can
control time without patching.

Contract of a `Clock` (tests/clock/ runs it against SystemClock and the ManualClock of shared/manual_clock.py):
- `now()`: the current instant, timezone-aware UTC (wall time: it may be set, so it may go back).
- `monotonic()`: seconds of elapsed time from an arbitrary origin; never goes back. Deadlines of sleeps and waits
  are reckoned on it, never on `now()`.
- `sleep(seconds)` blocks the calling thread until `seconds` of monotonic time have passed (none for seconds <= 0);
  `pause(seconds)` is the same for a coroutine, holding no thread (it yields to its loop at least once).
- `wait_for(condition, predicate, seconds)`: `threading.Condition.wait_for` with its timeout on this clock. The
  caller holds `condition`; returns as soon as `predicate()` is true once `condition` is notified (True), or
  `predicate()` once `seconds` have passed (False unless it turned true meanwhile). Whoever makes the predicate
  true notifies `condition`, as with the threading one: a stop flag, a queue of pending work.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Elapsed seconds from an arbitrary origin, never going back."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block this thread for `seconds` on this clock."""
        ...

    async def pause(self, seconds: float) -> None:
        """Suspend this coroutine for `seconds` on this clock."""
        ...

    def wait_for(self, condition: threading.Condition, predicate: Callable[[], bool], seconds: float) -> bool:
        """`condition.wait_for(predicate, seconds)`, the seconds on this clock; the caller holds `condition`."""
        ...


async def pause_until(clock: Clock, instant: datetime) -> None:
    """Suspend this coroutine until `instant` on `clock` (at once when it has passed)."""
    wait = (instant - clock.now()).total_seconds()
    if wait > 0:
        await clock.pause(wait)


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(seconds, 0.0))

    async def pause(self, seconds: float) -> None:
        await asyncio.sleep(max(seconds, 0.0))

    def wait_for(self, condition: threading.Condition, predicate: Callable[[], bool], seconds: float) -> bool:
        return condition.wait_for(predicate, max(seconds, 0.0))


class OffsetClock(SystemClock):
    """The system clock `offset` ahead (behind when negative): the local host's clock when started with
    `--clock-offset` (shared/settings/clock_offset.py). Only `now` moves; everything else is the system clock's,
    inherited, since every wait and monotonic reading is relative."""

    def __init__(self, offset: timedelta) -> None:
        super().__init__()
        self.offset = offset

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset


def clock_with_offset(offset: timedelta) -> SystemClock:
    """The system clock, or an OffsetClock when `offset` is not zero."""
    return OffsetClock(offset) if offset else SystemClock()
