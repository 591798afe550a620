"""The Clock contract (shared/clock.py), the same tests against each clock of conftest.py: a sleep, a pause and a
timed wait end once their interval has passed on that clock and not before; a wait whose predicate turns true
ends at once; nothing asked to wait no time waits; monotonic time never goes back."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from tests.clock.conftest import Driven
from tests.support.manual_time import until


class Running:
    """A call on a thread of its own, and what it returned (with the clock's monotonic time before and after)."""

    def __init__(self, driven: Driven, call: Callable[[], Any]) -> None:
        self.result: Any = None
        self.started = self.ended = -1.0

        def run() -> None:
            self.started = driven.clock.monotonic()
            self.result = call()
            self.ended = driven.clock.monotonic()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    @property
    def done(self) -> bool:
        return not self.thread.is_alive()

    def join(self) -> bool:
        self.thread.join(5)
        return self.done


def _in_a_loop(call: Callable[[], Any]) -> Callable[[], Any]:
    """`call`'s coroutine run on an event loop of its own (in the caller's thread)."""
    return lambda: asyncio.run(call())


def test_a_sleep_ends_once_its_interval_has_passed_and_not_before(driven: Driven) -> None:
    sleeping = Running(driven, lambda: driven.clock.sleep(driven.interval))
    driven.waiting(1)
    driven.advance(driven.interval / 2)
    assert not sleeping.done
    driven.advance(driven.interval / 2 + 0.01)
    assert sleeping.join()
    assert sleeping.ended - sleeping.started >= driven.interval


def test_a_pause_ends_once_its_interval_has_passed_and_not_before(driven: Driven) -> None:
    pausing = Running(driven, _in_a_loop(lambda: driven.clock.pause(driven.interval)))
    driven.waiting(1)
    driven.advance(driven.interval / 2)
    assert not pausing.done
    driven.advance(driven.interval / 2 + 0.01)
    assert pausing.join()
    assert pausing.ended - pausing.started >= driven.interval


def test_a_pause_holds_no_thread_its_loop_runs_others_meanwhile(driven: Driven) -> None:
    ran: list[str] = []

    async def both() -> None:
        async def other() -> None:
            ran.append("other")

        await asyncio.gather(driven.clock.pause(driven.interval), other())

    pausing = Running(driven, _in_a_loop(both))
    driven.waiting(1)
    assert until(lambda: ran == ["other"])
    assert not pausing.done
    driven.advance(driven.interval + 0.01)
    assert pausing.join()


def test_a_timed_wait_returns_false_once_its_interval_has_passed_and_not_before(driven: Driven) -> None:
    condition = threading.Condition()

    def wait() -> bool:
        with condition:
            return driven.clock.wait_for(condition, lambda: False, driven.interval)

    waiting = Running(driven, wait)
    driven.waiting(1)
    driven.advance(driven.interval / 2)
    assert not waiting.done
    driven.advance(driven.interval / 2 + 0.01)
    assert waiting.join()
    assert waiting.result is False
    assert waiting.ended - waiting.started >= driven.interval


def test_a_timed_wait_returns_true_at_once_when_its_predicate_turns_true(driven: Driven) -> None:
    condition = threading.Condition()
    stopped = False

    def wait() -> bool:
        with condition:
            return driven.clock.wait_for(condition, lambda: stopped, 20 * driven.interval)

    waiting = Running(driven, wait)
    driven.waiting(1)
    with condition:
        stopped = True
        condition.notify_all()
    assert waiting.join()  # long before its interval, which no one lets pass
    assert waiting.result is True
    assert waiting.ended - waiting.started < 20 * driven.interval


def test_a_timed_wait_whose_predicate_holds_already_returns_true_without_waiting(driven: Driven) -> None:
    condition = threading.Condition()
    with condition:
        assert driven.clock.wait_for(condition, lambda: True, driven.interval) is True


def test_no_time_to_wait_returns_at_once(driven: Driven) -> None:
    condition = threading.Condition()

    def none_at_all() -> bool:
        driven.clock.sleep(0)
        driven.clock.sleep(-1)
        asyncio.run(driven.clock.pause(0))
        with condition:
            return driven.clock.wait_for(condition, lambda: False, 0)

    waiting = Running(driven, none_at_all)
    assert waiting.join()  # no advance: on the manual clock, only this ends it
    assert waiting.result is False


def test_monotonic_time_never_goes_back(driven: Driven) -> None:
    readings = [driven.clock.monotonic()]
    for _ in range(5):
        driven.advance(driven.interval / 10)
        readings.append(driven.clock.monotonic())
        readings.append(driven.clock.monotonic())
    assert readings == sorted(readings)
    assert readings[-1] - readings[0] >= driven.interval / 2
