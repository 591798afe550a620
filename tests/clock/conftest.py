"""The clocks the contract suite (test_clock_contract.py) holds to shared/clock.py's contract, each with how a test
moves its time: the system clock's by sleeping real short intervals, the manual clock's by `advance`.

- system: SystemClock.
- hand-set: tests/support/clock.py's ManualClock (only `now` by hand; its waits are the system clock's).
- manual: shared/manual_clock.py's ManualClock, every kind of time by hand.

`interval` is how long a test's sleeps and waits are on that clock: short real ones where time is real, a long one
on the manual clock (nothing but an advance may end it, however long). `waiting(n)` returns once n sleepers wait on
a manual clock (an advance before a sleep began would not end it); a real clock's sleep counts from its own start.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from shared.clock import Clock, SystemClock
from shared.manual_clock import ManualClock
from tests.support.clock import ManualClock as HandSetClock
from tests.support.manual_time import until

START = datetime(2026, 3, 1, 12, 0, 30, tzinfo=UTC)
REAL_INTERVAL = 0.3


@dataclass
class Driven:
    name: str
    clock: Clock
    interval: float
    advance: Callable[[float], None]
    waiting: Callable[[int], None]


def _none_to_wait_for(_: int) -> None:
    return None


def system() -> Driven:
    return Driven("system", SystemClock(), REAL_INTERVAL, time.sleep, _none_to_wait_for)


def hand_set() -> Driven:
    return Driven("hand-set", HandSetClock(START), REAL_INTERVAL, time.sleep, _none_to_wait_for)


def manual() -> Driven:
    clock = ManualClock(START)

    def waiting(count: int) -> None:
        assert until(lambda: clock.sleepers() >= count), f"{count} sleeper(s) never began to wait"

    return Driven("manual", clock, 60.0, clock.advance, waiting)


@pytest.fixture(params=[system, hand_set, manual], ids=["system", "hand-set", "manual"])
def driven(request: pytest.FixtureRequest) -> Driven:
    make: Callable[[], Driven] = request.param
    return make()
