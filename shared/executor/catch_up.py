"""Catch-up: batches that arrive late run at most `width` at a time in a process, in the order they arrived.

Contract: the executor enters `CatchUp.turn(batch, arrived)` after opening a batch's guard and before reading its
jobs and claiming its occurrences, and leaves it when the batch's attempts are recorded. A batch whose (first)
second is more than `catch_up_after` before it `arrived` is late (a backlog: the executor was behind or down, or a
backfill) and waits for one of `width` places of its process (SCHEDULER_CATCH_UP_BATCHES), first come first
served. A batch in time never waits and takes no place: the dispatcher's batches turn visible `early_visibility`
before their second, so a herd's are in hand ahead of it, and a retry or an error action is queued for now.

Why: host.json lets an instance hold up to 80 batches, which a herd of 5,000 needs in hand before its second
(about 60). Under a backlog the same 80 were all claimed as they arrived, and thousands of claims waited a minute
for the CPU, each renewed every `renew_every`: the process carried 90 executions a second where it carries 130
holding 48 (bench/overload.py, newBatchThreshold 48 against 16). A late batch waiting here holds only its message
and its watchdog copies; its claims are taken when its turn comes. A place is held until the batch's attempts are
recorded, as the host holds the batch's message: a slow target holds it no longer than it holds the message.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime

from ..occurrence import OccurrenceBatch
from ..timings import Timings


class CatchUp:
    """The places of one process's late batches: `width` of them, on each event loop that runs batches."""

    def __init__(self, timings: Timings, width: int) -> None:
        if width < 1:
            raise ValueError("catch-up width must be at least 1")
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
        """Run the body at once for a batch in time; a late one once it has a place, which it keeps until the body
        ends."""
        if not self.late(batch, arrived):
            yield
            return
        loop = asyncio.get_running_loop()
        places = self._places.get(loop)
        if places is None:
            places = self._places[loop] = asyncio.Semaphore(self.width)
        async with places:
            yield
