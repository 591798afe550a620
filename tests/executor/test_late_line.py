"""The line of late batches (shared/executor/late_line.py) on its own: a batch not yet due never waits; a place
comes back once each attempt of its batch went out or only waits to take a claim over, not before; a waiter
cancelled leaves no place taken."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from shared.executor.job_order import Turn
from shared.executor.late_line import LateLine, LateTurn
from shared.keys import JobKey
from shared.occurrence import OccurrenceBatch, OccurrenceMessage

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _batch(seconds_from_now: float) -> OccurrenceBatch:
    due = NOW + timedelta(seconds=seconds_from_now)
    return OccurrenceBatch((OccurrenceMessage(JobKey("s", "g", "c", "j"), due, due),))


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_batch_not_yet_due_never_waits_for_late_ones() -> None:
    async def run() -> None:
        line = LateLine(1)
        await line.turn(_batch(-5), NOW)  # the one place, held
        ahead = await asyncio.wait_for(line.turn(_batch(3), NOW), 1)
        assert not ahead.waited and line.running == 1

    asyncio.run(run())


async def _one_place_held_and_one_waiting() -> tuple[LateLine, LateTurn, list[Turn], asyncio.Future[LateTurn]]:
    """A line of one place, held by a late batch of two attempts, and a later batch waiting for it."""
    line = LateLine(1)
    first = await line.turn(_batch(-5), NOW)
    turns = [Turn(), Turn()]
    first.until_out(turns)
    return line, first, turns, asyncio.ensure_future(line.turn(_batch(-4), NOW))


def test_a_place_comes_back_once_every_attempt_went_out() -> None:
    async def run() -> None:
        line, first, turns, second = await _one_place_held_and_one_waiting()
        turns[0].went_out()
        await _settle()
        assert not second.done() and line.waiting == 1
        turns[1].went_out()
        await _settle()
        assert second.done() and second.result().waited and line.running == 1
        first.close()  # the batch's end: its place was given back already, not twice
        assert line.running == 1
        second.result().close()
        assert line.running == 0

    asyncio.run(run())


def test_a_place_comes_back_while_the_batchs_attempts_only_wait_to_take_claims_over() -> None:
    """After a restart every batch the host takes over waits `takeover_wait` for its dead runner's leases: waiting so,
    a batch holds no place, so those batches wait together instead of two at a time."""

    async def run() -> None:
        _, _, turns, second = await _one_place_held_and_one_waiting()
        turns[0].waits()
        await _settle()
        assert not second.done()
        turns[1].went_out()
        await _settle()
        assert second.done() and second.result().waited
        assert not turns[0].out.is_set()  # the job's next attempt in the batch still waits for it to go out

    asyncio.run(run())


def test_a_cancelled_waiter_takes_no_place() -> None:
    async def run() -> None:
        line = LateLine(1)
        held = await line.turn(_batch(-5), NOW)
        gone = asyncio.ensure_future(line.turn(_batch(-9), NOW))  # earlier due: it would go first
        kept = asyncio.ensure_future(line.turn(_batch(-1), NOW))
        await _settle()
        gone.cancel()
        await _settle()
        held.close()
        await _settle()
        assert kept.done() and line.running == 1 and line.waiting == 0

    asyncio.run(run())


def test_on_wait_is_called_only_when_a_batch_starts_to_wait() -> None:
    """The executor starts its held report from it (executor/held_report.py): a process whose batches never wait
    starts no loop."""

    async def run() -> None:
        waits: list[int] = []
        line = LateLine(1, on_wait=lambda: waits.append(1))
        first = await line.turn(_batch(-5), NOW)
        await line.turn(_batch(3), NOW)  # not yet due: never waits
        assert waits == [] and line.held() == (None, 0)
        second = asyncio.ensure_future(line.turn(_batch(-4), NOW))
        await _settle()
        assert waits == [1] and line.held() == (NOW - timedelta(seconds=4), 1)
        first.close()
        await _settle()
        assert second.done() and line.held() == (None, 0)

    asyncio.run(run())
