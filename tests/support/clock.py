"""The tests' hand-set clock: shared/manual_clock.py's ManualClock with only `now` moved by hand.

The tests written before the clock seam pin the instant a decision sees (`clock.current = ...`, `advance`) while
the executor under them runs its windows, leases and retries in real time, as it did when they went around the
clock. So this clock hands its monotonic time, sleeps and waits on to the system clock. A test that drives those
too by hand builds shared.manual_clock.ManualClock itself (tests/clock/, tests/executor/test_clock_driven.py).
"""

from __future__ import annotations

from datetime import datetime

from shared.clock import SystemClock
from shared.manual_clock import ManualClock as _ManualClock


class ManualClock(_ManualClock):
    """`now` moved by hand (`advance`, `advance_to`, `current = ...`); every wait takes real time."""

    def __init__(self, now: datetime) -> None:
        super().__init__(now, waits=SystemClock())
