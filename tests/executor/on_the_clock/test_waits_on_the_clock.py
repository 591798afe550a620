"""Every wait of the pipeline is on the runtime's clock (a ManualClock here, the store in memory), one test per
mechanism: a batch's guard and a dispatch task's watchdog renew once `renew_every` has passed on the clock (their
renewers' loops wait `renewer_poll` on it); a write after an action is tried again `record_retry_first` later on
the clock; gathered asks go to storage once their window has passed on it; a collection read answers for
`collection_fresh` of the clock's time; a rate rule's next turn on the wire comes when its window has passed on it.
Each first waits longer in real time than the mechanism's own period, and shows nothing happened.

Real time here only lets threads run (tests/support/manual_time.py); the clock's time passes only by advance."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from azure.core.exceptions import ServiceRequestError

from shared.executor.collection_gate import CollectionGate
from shared.executor.gathered import Gathered
from shared.executor.persist import persist
from shared.executor.wire_turns import WireTurns
from shared.keys import CollectionKey
from shared.manual_clock import ManualClock
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.store.queues import ShardTask
from shared.timings import Timings
from tests.executor.support import JC, RG, SUB, http, make_collection, put_job
from tests.support.manual_time import START, runtime_in_memory, until

TIMINGS = Timings()


@pytest.fixture
def rt(clock: ManualClock) -> Iterator[Runtime]:
    with runtime_in_memory(clock) as runtime:
        make_collection(runtime)
        yield runtime


def _renews_after_renew_every(clock: ManualClock, receipt: Any) -> None:
    """`receipt()`: the watchdog's current receipt, new at each renewal. Opened at clock time 0: due at renew_every,
    which the renewer's loop (`renewer_poll`) sees at its first wake on or after it."""
    assert until(lambda: clock.sleepers() == 1)  # the renewer's loop waits for its period
    first = receipt()
    clock.advance(TIMINGS.renew_every - TIMINGS.renewer_poll)  # the loop wakes: nothing due yet
    time.sleep(2 * TIMINGS.renewer_poll.total_seconds())  # were its period real, it would have looked twice
    assert until(lambda: clock.sleepers() == 1)
    assert receipt() == first
    clock.advance(TIMINGS.renewer_poll)  # renew_every has passed: the loop's next look renews
    assert until(lambda: receipt() != first)


def test_a_batch_guard_renews_once_renew_every_has_passed_on_the_clock(rt: Runtime, clock: ManualClock) -> None:
    job = put_job(rt, "guarded", {"startTime": (START + timedelta(days=1)).isoformat(), "action": http("http://x")})
    batch = OccurrenceBatch((OccurrenceMessage(job.key, START, START, generation=job.generation),))
    guard = rt.executor.guards.open(batch)
    try:
        _renews_after_renew_every(clock, lambda: guard.watchdog)
    finally:
        rt.executor.guards.close(guard)


def test_a_dispatch_task_watchdog_renews_once_renew_every_has_passed_on_the_clock(
    rt: Runtime, clock: ManualClock
) -> None:
    with rt.dispatcher.watchdogs.watching(ShardTask("202603011201", 0)) as watch:
        _renews_after_renew_every(clock, lambda: watch.watchdog)


def test_a_write_after_an_action_is_tried_again_once_its_retry_delay_has_passed_on_the_clock(
    clock: ManualClock,
) -> None:
    tries: list[float] = []

    def write() -> None:
        tries.append(clock.monotonic())
        if len(tries) == 1:
            raise ServiceRequestError("storage unreachable")

    writing = threading.Thread(target=persist, args=(clock, TIMINGS, write, "a write"), daemon=True)
    writing.start()
    assert until(lambda: clock.sleepers() == 1)  # sleeping after the first fault
    time.sleep(2 * TIMINGS.record_retry_first.total_seconds())
    assert tries == [0.0]
    clock.advance(TIMINGS.record_retry_first)
    writing.join(5)
    assert tries == [0.0, TIMINGS.record_retry_first.total_seconds()]


class _Tens:
    """A `Gathered`'s flush that answers each request with ten times it, and the calls it took, run inline."""

    def __init__(self, clock: ManualClock) -> None:
        self.flushed: list[list[int]] = []
        self.gathered: Gathered[str, int, int] = Gathered(self._io, self._flush, 0.05, clock)

    def _flush(self, _: str, requests: list[int]) -> list[int]:
        self.flushed.append(requests)
        return [request * 10 for request in requests]

    async def _io(self, fn: Any, *args: Any) -> Any:
        return fn(*args)


def test_gathered_asks_go_to_storage_together_once_their_window_has_passed_on_the_clock(clock: ManualClock) -> None:
    async def asks() -> tuple[list[int], _Tens]:
        tens = _Tens(clock)
        answers = asyncio.gather(tens.gathered.ask("row", 1), tens.gathered.ask("row", 2))
        await asyncio.sleep(0.2)  # four windows of real time
        assert tens.flushed == []
        clock.advance(0.05)
        return list(await answers), tens

    answers, tens = asyncio.run(asks())
    assert answers == [10, 20]
    assert tens.flushed == [[1, 2]]


def test_a_gathered_asker_cancelled_while_it_waits_leaves_the_shared_call_to_the_others(clock: ManualClock) -> None:
    async def asks() -> tuple[bool, int, _Tens]:
        tens = _Tens(clock)
        gone = asyncio.ensure_future(tens.gathered.ask("row", 1))
        stays = asyncio.ensure_future(tens.gathered.ask("row", 2))
        await asyncio.sleep(0.05)  # both asked, waiting for the window
        gone.cancel()
        await asyncio.sleep(0.05)
        clock.advance(0.05)
        return gone.cancelled(), await asyncio.wait_for(stays, 5), tens

    cancelled, answer, tens = asyncio.run(asks())
    assert (cancelled, answer) == (True, 20)
    assert tens.flushed == [[1, 2]]  # asked before it was cancelled: the call went out with it


def test_a_collection_read_answers_for_collection_fresh_of_the_clocks_time(rt: Runtime, clock: ManualClock) -> None:
    reads: list[CollectionKey] = []

    async def io(fn: Any, *args: Any) -> Any:
        reads.append(args[0])
        return fn(*args)

    async def ask_thrice() -> None:
        gate = CollectionGate(rt.store, clock, io)
        key = CollectionKey(SUB, RG, JC)
        assert await gate.enabled(key)
        await asyncio.sleep(TIMINGS.collection_fresh.total_seconds() + 0.2)  # past its freshness, were it real
        assert await gate.enabled(key)
        assert len(reads) == 1
        clock.advance(TIMINGS.collection_fresh + timedelta(milliseconds=1))
        assert await gate.enabled(key)
        assert len(reads) == 2

    asyncio.run(ask_thrice())


def test_the_next_turn_under_a_rate_rule_comes_once_its_window_has_passed_on_the_clock(clock: ManualClock) -> None:
    turns = WireTurns(clock)
    rate, share = 1.0, 0.97  # one request in any 1.03 s

    async def two_turns() -> None:
        slot = clock.now()
        await turns.turn("rule", rate, share, slot, "first")  # at once: nothing went before it
        second = asyncio.ensure_future(turns.turn("rule", rate, share, slot, "second"))
        await asyncio.sleep(1.5)  # past the rule's window, were it real
        assert not second.done()
        clock.advance(1 / (rate * share))
        await asyncio.wait_for(second, 5)

    asyncio.run(two_turns())
