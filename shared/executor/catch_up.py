"""Catch-up: batches that arrive late run a few at a time in a process, in the order they arrived.

Contract: the executor enters `CatchUp.turn(batch, arrived)` after opening a batch's guard and before reading its
jobs and claiming its occurrences. A batch whose (first) second is more than `catch_up_after` before it `arrived`
is late: a backlog (the executor was behind, down, or a backfill) and waits for one of `width` places of its
process (SCHEDULER_CATCH_UP_BATCHES), first come first served. A batch in time never waits: the dispatcher's
batches turn visible `early_visibility` before their second, so a herd is in hand ahead of it, and a retry or an
error action is queued for now. A late batch gives its place back when its attempts are recorded, or after
`catch_up_hold` if they take longer: then it waits on its targets (slow or hanging), not for the process, and must
not hold the backlog behind it.

Why: a claim is renewed every `renew_every` from when it is taken until its attempt is recorded, a transaction per
hundred. A process that claimed every batch it held as it arrived (host.json keeps up to 80 in hand) had, under a
backlog it could not run at once, thousands of claims each waiting a minute for the CPU and renewed every 2 s:
the renewals took most of storage and of the process, which then carried half what it carries when it takes the
backlog a few batches at a time (bench/overload.py). Waiting here, a batch holds only its message and its
watchdog copies (their renewal is one request a batch); its claims are taken when its turn comes.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime

from ..clock import Clock
from ..occurrence import OccurrenceBatch
from ..timings import Timings


class CatchUp:
    """The places of one process's late batches: `width` of them, on each event loop that runs batches."""

    def __init__(self, clock: Clock, timings: Timings, width: int) -> None:
        if width < 1:
            raise ValueError("catch-up width must be at least 1")
        self.clock = clock
        self.timings = timings
        self.width = width
        # Per event loop, as an asyncio primitive belongs to one (tools and tests run batches on loops of their own).
        self._places: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def late(self, batch: OccurrenceBatch, arrived: datetime) -> bool:
        return arrived - batch.due > self.timings.catch_up_after

    @asynccontextmanager
    async def turn(self, batch: OccurrenceBatch, arrived: datetime) -> AsyncIterator[None]:
        """Run the body at once for a batch in time; a late one after it got a place, which it keeps until the
        body ends or `catch_up_hold` has passed."""
        if not self.late(batch, arrived):
            yield
            return
        loop = asyncio.get_running_loop()
        places = self._places.get(loop)
        if places is None:
            places = self._places[loop] = asyncio.Semaphore(self.width)
        await places.acquire()
        held = True

        def give_back() -> None:
            nonlocal held
            if held:
                held = False
                places.release()

        async def hold() -> None:
            await self.clock.pause(self.timings.catch_up_hold.total_seconds())
            give_back()

        holding = asyncio.ensure_future(hold())
        try:
            yield
        finally:
            holding.cancel()
            give_back()
