"""What the ManualClock (shared/manual_clock.py) adds to the Clock contract: its time moves only by `advance`, so
nothing wakes before one, however long real time passes; an advance wakes exactly the sleepers it makes due, in
deadline order, threads and coroutines on any loop; setting the wall time moves no deadline."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import timedelta

import pytest

from shared.manual_clock import ManualClock
from tests.clock.conftest import START
from tests.support.manual_time import until


def _sleeping(clock: ManualClock, seconds: float, woke: list[float]) -> threading.Thread:
    thread = threading.Thread(target=lambda: (clock.sleep(seconds), woke.append(seconds)), daemon=True)
    thread.start()
    return thread


def _loop_in_a_thread() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    return loop


def test_nothing_wakes_before_an_advance_however_long_real_time_passes() -> None:
    clock = ManualClock(START)
    woke: list[float] = []
    _sleeping(clock, 0.01, woke)
    loop = _loop_in_a_thread()
    paused = asyncio.run_coroutine_threadsafe(clock.pause(0.01), loop)
    condition = threading.Condition()

    def wait() -> None:
        with condition:
            clock.wait_for(condition, lambda: False, 0.01)
        woke.append(-1)

    threading.Thread(target=wait, daemon=True).start()
    assert until(lambda: clock.sleepers() == 3)
    time.sleep(0.5)  # fifty times their interval in real time
    assert woke == [] and not paused.done()
    clock.advance(0.01)
    assert until(lambda: sorted(woke) == [-1, 0.01] and paused.done())
    loop.call_soon_threadsafe(loop.stop)


def test_an_advance_wakes_exactly_the_sleepers_it_makes_due() -> None:
    clock = ManualClock(START)
    woke: list[float] = []
    threads = [_sleeping(clock, seconds, woke) for seconds in (3.0, 1.0, 2.0)]
    assert until(lambda: clock.sleepers() == 3)
    clock.advance(2.0)  # due: the ones of 1 s and 2 s, exactly reached
    assert until(lambda: sorted(woke) == [1.0, 2.0])
    time.sleep(0.1)  # let a wrongly woken third one run
    assert sorted(woke) == [1.0, 2.0] and threads[0].is_alive() and clock.sleepers() == 1
    clock.advance(timedelta(seconds=1))
    assert until(lambda: sorted(woke) == [1.0, 2.0, 3.0])


def test_an_advance_wakes_coroutines_in_deadline_order_on_each_loop() -> None:
    clock = ManualClock(START)
    loops = [_loop_in_a_thread(), _loop_in_a_thread()]
    order: list[tuple[int, float]] = []

    async def pause(index: int, seconds: float) -> None:
        await clock.pause(seconds)
        order.append((index, seconds))

    pauses = [
        asyncio.run_coroutine_threadsafe(pause(index, seconds), loop)
        for index, loop in enumerate(loops)
        for seconds in (3.0, 1.0, 2.0)
    ]
    assert until(lambda: clock.sleepers() == 6)
    clock.advance(5)
    assert until(lambda: all(p.done() for p in pauses))
    for index in range(len(loops)):
        assert [seconds for i, seconds in order if i == index] == [1.0, 2.0, 3.0]
    for loop in loops:
        loop.call_soon_threadsafe(loop.stop)


def test_now_and_monotonic_move_together_by_advance_and_advance_to() -> None:
    clock = ManualClock(START)
    clock.advance(1.5)
    clock.advance(timedelta(seconds=0.5))
    assert (clock.now(), clock.monotonic()) == (START + timedelta(seconds=2), 2.0)
    clock.advance_to(START + timedelta(minutes=1))
    assert (clock.now(), clock.monotonic()) == (START + timedelta(minutes=1), 60.0)
    with pytest.raises(ValueError, match="never goes back"):
        clock.advance(-1)


def test_setting_the_wall_time_moves_no_deadline_and_no_monotonic_time() -> None:
    clock = ManualClock(START)
    woke: list[float] = []
    _sleeping(clock, 1.0, woke)
    assert until(lambda: clock.sleepers() == 1)
    clock.current = START + timedelta(days=1)
    clock.current = START - timedelta(days=1)  # wall time may go back, as a machine's clock may be set back
    time.sleep(0.1)
    assert woke == [] and clock.monotonic() == 0.0 and clock.now() == START - timedelta(days=1)
    clock.advance(1)
    assert until(lambda: woke == [1.0])


def test_a_cancelled_pause_leaves_no_sleeper_behind() -> None:
    clock = ManualClock(START)

    async def cancelled() -> None:
        task = asyncio.create_task(clock.pause(10))
        await asyncio.sleep(0)
        assert clock.sleepers() == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    assert clock.sleepers() == 0


def test_an_instant_without_a_zone_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        ManualClock(START.replace(tzinfo=None))


def test_a_float_remainder_of_a_passed_interval_returns_at_once_and_moves_time_past_it() -> None:
    clock = ManualClock(START)
    at = 0.1 + 0.2  # a deadline reckoned in floats: 0.30000000000000004
    clock.advance(0.3)
    remainders: list[float] = []

    def wait_for_it() -> None:  # as code that asks again until its time has come does
        while (left := at - clock.monotonic()) > 0:
            remainders.append(left)
            clock.sleep(left)

    waiting = threading.Thread(target=wait_for_it, daemon=True)
    waiting.start()
    waiting.join(5)  # no advance comes: it must neither spin nor wait for one
    assert not waiting.is_alive()
    assert len(remainders) == 1 and remainders[0] < 1e-9
    assert at <= clock.monotonic() <= 0.3 + 1e-9
