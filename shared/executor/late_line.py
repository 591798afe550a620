"""Late batches take turns: a process runs at most `width` batches that came after their second at once, the
others wait, unclaimed, in due order.

Why: under a backlog (more due than the process carries) the host hands over as many messages as it holds
(batchSize + newBatchThreshold, 80), all late. Run side by side, every batch got a sliver of the process: a batch
of 100 took 30-70 s, its claims were renewed all that while (thousands held at once), renewals lagged past their
leases' margin on the starved process, other workers took attempts over, and some fired twice (an overload run
of bench/overload.py: batches held 32 s at the median, 3 attempts taken over while they ran, 5 fired twice).
In turns, a batch runs at the process's full speed in a few seconds, its claims are few and young, and the
earliest due goes first.

Contract:
- `LateLine(width)`; `await line.turn(batch, now)` returns a `LateTurn`: at once for a batch not yet due (a
  herd's, claimed ahead of its second, never waits) and for a late one while fewer than `width` late batches hold
  a place; otherwise it waits until a place is given back, earliest `batch.due` first (ties: in arrival order).
- A waiting batch holds nothing but its guard (shared/leases.py), which keeps its watchdog hidden.
- `LateTurn.until_out(turns)`: the place is given back once each of the batch's attempts went out (its job-order
  `Turn.idle`, executor/job_order.py: its request is on the wire, or it ended without one) or only waits to take a
  claim over. An attempt waiting for a slow target's answer, or for a dead runner's lease, holds no place, so slow
  targets' batches still overlap, and the batches a restarted host takes over wait their 3 s together. `close()`,
  which the batch calls at its end whatever happened, gives it back too; a place is given back once.
- A cancelled wait leaves the line without taking a place.
- `LateLine(width, on_wait)`: `on_wait()` is called each time a batch starts to wait (the executor starts its
  held report then, executor/held_report.py).
- `LateLine.held()`: the earliest due of the batches waiting in the process's lines and their count ((None, 0):
  none waits), safe to read from another thread (the held report's, executor/held_report.py): each line keeps it
  as one tuple, replaced whenever a batch joins or leaves it.
- One line per event loop (the worker runs every invocation on one; tools and tests that run batches on loops of
  their own get lines of their own), as the action limits keep theirs (shared/actions/limits.py).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime

from ..occurrence import OccurrenceBatch
from .job_order import Turn


class LateTurn:
    """A batch's place in the line (or none: a batch not late)."""

    def __init__(self, line: _Line | None, waited: bool = False) -> None:
        self._line = line
        self.waited = waited  # it waited for its place: its guard's renewals start afresh (leases.py `restart`)
        self._out: asyncio.Future[list[bool]] | None = None

    def until_out(self, turns: Sequence[Turn]) -> None:
        if self._line is None:
            return
        out = self._out = asyncio.gather(*(turn.idle.wait() for turn in turns))
        out.add_done_callback(lambda _: self.close())

    def close(self) -> None:
        if self._out is not None and not self._out.done():
            self._out.cancel()
        line, self._line = self._line, None
        if line is not None:
            line.give_back()


class LateLine:
    """The lines of late batches, one per event loop."""

    def __init__(self, width: int, on_wait: Callable[[], None] = lambda: None) -> None:
        self.width = width
        self._on_wait = on_wait
        self._lines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Line] = weakref.WeakKeyDictionary()

    def _line(self) -> _Line:
        loop = asyncio.get_running_loop()
        line = self._lines.get(loop)
        if line is None:
            line = self._lines[loop] = _Line(self.width, self._on_wait)
        return line

    async def turn(self, batch: OccurrenceBatch, now: datetime) -> LateTurn:
        return await self._line().turn(batch, now)

    def held(self) -> tuple[datetime | None, int]:
        try:
            found = [line.held for line in list(self._lines.values())]
        except RuntimeError:  # a line was added on another thread meanwhile (a new event loop): none waits there yet
            return self.held()
        earliest = [due for due, _ in found if due is not None]
        return min(earliest, default=None), sum(count for _, count in found)

    @property
    def running(self) -> int:
        return self._line().running

    @property
    def waiting(self) -> int:
        return self._line().waiting


class _Line:
    def __init__(self, width: int, on_wait: Callable[[], None]) -> None:
        self.width = width
        self._on_wait = on_wait
        self.running = 0
        self._waiting: list[tuple[datetime, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self.held: tuple[datetime | None, int] = (None, 0)  # the earliest waiting due and the count (`_mark`)

    async def turn(self, batch: OccurrenceBatch, now: datetime) -> LateTurn:
        if batch.due > now:
            return LateTurn(None)
        if self.running < self.width and not self._waiting:
            self.running += 1
            return LateTurn(self)
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (batch.due, next(self._order), place))
        self._mark()
        self._on_wait()
        try:
            await place
        except asyncio.CancelledError:
            if place.done() and not place.cancelled():
                self.give_back()  # given a place just as it was cancelled: pass it on
            self._mark()
            raise
        return LateTurn(self, waited=True)

    def _mark(self) -> None:
        waiting = [due for due, _, place in self._waiting if not place.done()]
        self.held = (min(waiting, default=None), len(waiting))

    @property
    def waiting(self) -> int:
        return self.held[1]

    def give_back(self) -> None:
        """A place is free: the earliest waiting batch takes it (a cancelled waiter is passed over)."""
        while self._waiting:
            _, _, place = heapq.heappop(self._waiting)
            if not place.done():
                place.set_result(None)  # the place passes on: `running` stays
                self._mark()
                return
        self.running -= 1
