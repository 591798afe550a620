"""The DST policy of a wall-clock series: where its slots run when a zone's clock changes.

A wall-clock series' slots are wall times (:mod:`.pattern`); it runs at the instants at which the zone's clock
reads them. Two kinds of change break that one-to-one reading (``ZoneClock.gaps``, ``ZoneClock.folds``):

* a spring-forward change at instant ``c`` skips the wall times ``[first skipped, after)``.
  ``GapPolicy.SHIFT`` (the default) runs the slots among them at ``c``, the first instant after the gap, as one
  run together with a slot at ``after`` (the wall time the clock reads at ``c``); ``GapPolicy.SKIP`` does not
  run them at all, while a slot at ``after``, a real wall time, still runs (once, at ``c``);
* a fall-back change at ``c`` repeats the wall times ``[first repeated, after)``: the clock reads them in the
  ``d = after - first`` seconds before ``c`` (the first pass), then again in the ``d`` seconds from ``c`` (the
  second pass). ``FoldPolicy.FIRST`` (the default) runs such a slot once, at its first instance; ``LAST`` once,
  at its second; ``BOTH`` at both, two runs.

A run is a distinct instant: counts and indexes count runs (a slot ``BOTH`` runs twice counts twice, a slot
``SKIP`` drops counts nothing, slots ``SHIFT`` merges count once). A series without a zone, or an elapsed-time
one (Minute/Hour without a schedule), has neither kind of change, so the policies do not touch it.

:class:`Runs` answers on integer seconds, unbounded (startTime, count and endTime are
:class:`~.series.OccurrenceSeries`' business): the first run after an instant, the last at or before one, the
k-th from one, how many in a span, what a change did to a run, and which changes dropped slots.

How: FIRST (``ZoneClock.to_instant``) and LAST (a repeated wall time moved to its second instance) both map wall
time to instant monotonically, so searches run on the wall axis and convert the answer; SKIP steps over the
slots a gap skips; BOTH is FIRST plus the second instances, which lie only in second passes, where FIRST runs
nothing. Each answer reads the changes near the instant asked (and a count those in its span) from the clock's
per-year lists; nothing walks run by run, with one exception: SKIP steps slot by slot over slots that lie in
gaps (a cheap check each), so a schedule naming only a wall time that a change skips every year, which never
runs (OccurrenceSeries does not refuse it: it is valid under SHIFT), is found empty by stepping one slot a year
up to the calendar's end (about 0.1 s per query).

Assumes what holds for every zone of the tz database: a fold repeats less than two days (the longest, Pacific/
Kwajalein's in 1969, 23 hours).
"""

from __future__ import annotations

from .calendar_math import DAY
from .clock import UtcClock
from .errors import RecurrenceError
from .model import FoldPolicy, GapPolicy, Recurrence
from .pattern import Pattern

__all__ = ["Runs", "check_policies"]

_REACH = 2 * DAY  # every fold within this distance of an instant may bear on a run near it


def check_policies(recurrence: Recurrence) -> None:
    """Raise :class:`RecurrenceError` (paths ``dstPolicy.gap``, ``dstPolicy.fold``) for a value of another type."""
    if not isinstance(recurrence.gap_policy, GapPolicy):
        raise RecurrenceError("dstPolicy.gap", f"{recurrence.gap_policy!r} is not one of Shift, Skip")
    if not isinstance(recurrence.fold_policy, FoldPolicy):
        raise RecurrenceError("dstPolicy.fold", f"{recurrence.fold_policy!r} is not one of First, Last, Both")


class Runs:
    """The run instants of a slot ``pattern`` on ``clock`` under a gap and a fold policy (see the module)."""

    __slots__ = ("pattern", "clock", "skip", "fold")

    def __init__(self, pattern: Pattern, clock: UtcClock, gap: GapPolicy, fold: FoldPolicy) -> None:
        self.pattern = pattern
        self.clock = clock
        self.skip = gap is GapPolicy.SKIP
        self.fold = fold

    # -- the monotonic map: FIRST (BOTH adds the second instances to it) or LAST --------------------------------

    def _instant(self, w: int) -> int:
        """The instant slot ``w`` runs at (its first instance under FIRST and BOTH)."""
        t = self.clock.to_instant(w)
        if self.fold is FoldPolicy.LAST:
            for c, first, after in self.clock.folds(t, t + _REACH):
                if first <= w < after:
                    return w - first + c
        return t

    def _bound(self, x: int) -> int:
        """The largest wall time ``w`` such that every wall time up to ``w`` runs at or before ``x``."""
        if self.fold is FoldPolicy.LAST:
            for c, first, after in self.clock.folds(x - _REACH, x + _REACH):
                if c - (after - first) <= x < c:
                    return first - 1  # the first pass: the repeated wall times run from c on
                if c <= x < c + (after - first):
                    return x + first - c  # the second pass: what the clock reads
        return self.clock.wall_bound(x)

    def _next(self, w: int) -> int | None:
        """The first slot after wall time ``w`` that runs."""
        s = self.pattern.next_slot(w)
        while self.skip and s is not None and self.clock.skipped(s):
            s = self.pattern.next_slot(s)
        return s

    def _prev(self, w: int, floor: int) -> int | None:
        """The last slot at or before wall time ``w`` that runs; None when it would run before ``floor``."""
        s = self.pattern.prev_slot(w)
        while self.skip and s is not None and self.clock.skipped(s):
            if self.clock.to_instant(s) < floor:
                return None
            s = self.pattern.prev_slot(s - 1)
        return s

    # -- queries ------------------------------------------------------------------------------------------------

    def after(self, x: int) -> int | None:
        """The first run after instant ``x`` (None for an empty pattern)."""
        s = self._next(self._bound(x))
        run = None if s is None else self._instant(s)
        if self.fold is FoldPolicy.BOTH:
            # A second instance beats the next first instance only in a fold under way at x.
            for c, first, after in self.clock.folds(x - _REACH, x + _REACH):
                if x < c + (after - first) - 1:
                    second = self.pattern.next_slot(max(x + first - c, first - 1))
                    if second is not None and second < after:
                        return min(second - first + c, run) if run is not None else second - first + c
        return run

    def upto(self, x: int, floor: int) -> int | None:
        """The last run at or before instant ``x``; None when there is none at or after ``floor``."""
        s = self._prev(self._bound(x), floor)
        run = None if s is None else self._instant(s)
        if run is not None and run < floor:
            run = None
        if self.fold is FoldPolicy.BOTH:
            # A later second instance ran at a fold whose two passes hold that run or the floor.
            near = {floor} if run is None else {floor, run}
            for c, first, after in {f for p in near for f in self.clock.folds(p - _REACH, p + _REACH)}:
                second = None if c > x else self.pattern.prev_slot(min(x + first - c, after - 1))
                if second is None or second < first:
                    continue
                instant = second - first + c
                if instant >= floor and (run is None or instant > run):
                    run = instant
        return run

    def count(self, lo: int, x: int) -> int:
        """The number of runs in ``[lo, x]``."""
        return self._count_first(lo, x) + (self._count_second(lo, x) if self.fold is FoldPolicy.BOTH else 0)

    def _count_first(self, lo: int, x: int) -> int:
        """Runs in ``[lo, x]`` by the monotonic map (so without BOTH's second instances)."""
        if x < lo:
            return 0
        rank = self.pattern.rank
        total = rank(self._bound(x)) - rank(self._bound(lo - 1))
        # A gap's slots run at its instant with a slot at its end (SHIFT: one run), or not at all (SKIP).
        for _, skipped, after in self.clock.gaps(lo, x):
            if self.skip:
                total -= rank(after - 1) - rank(skipped - 1)
            else:
                total -= max(0, rank(after) - rank(skipped - 1) - 1)
        return total

    def _count_second(self, lo: int, x: int) -> int:
        """Second instances in ``[lo, x]``."""
        total, rank = 0, self.pattern.rank
        for c, first, after in self.clock.folds(lo - _REACH, x):
            top, bottom = min(after - 1, x + first - c), max(first, lo + first - c)
            total += max(0, rank(top) - rank(bottom - 1))
        return total

    def nth(self, lo: int, k: int, limit: int) -> int | None:
        """The ``k``-th run (``k >= 1``) at or after instant ``lo``; None when it lies after ``limit``."""
        found = self._nth_first(lo, k, limit)
        if self.fold is not FoldPolicy.BOTH:
            return found
        rank, select = self.pattern.rank, self.pattern.select
        if found is None and k > 2 * (rank(self.clock.wall_bound(limit)) - rank(self.clock.wall_bound(lo - 1))):
            return None  # each slot runs at most twice
        # Second instances come before `found`: walk the folds up to it in order, each adding its own.
        counted, start = 0, lo  # runs in [lo, start)
        for c, first, after in self.clock.folds(lo - _REACH, limit if found is None else found):
            bottom = max(first, lo + first - c)  # the first repeated slot whose second instance is >= lo
            seconds = rank(after - 1) - rank(bottom - 1)
            if seconds <= 0:
                continue
            before = self._count_first(start, c - 1)
            if counted + before >= k:
                break
            if counted + before + seconds >= k:
                run = select(rank(bottom - 1) + k - counted - before) - first + c
                return run if run <= limit else None
            # The monotonic map runs nothing in the second pass: go on after it.
            counted, start = counted + before + seconds, c + after - first
        return found if counted == 0 else self._nth_first(start, k - counted, limit)

    def _nth_first(self, lo: int, k: int, limit: int) -> int | None:
        """``nth`` by the monotonic map (without BOTH's second instances)."""
        pattern = self.pattern
        rank = pattern.rank(self._bound(lo - 1)) + k
        found, counted_to = 0, lo - 1
        while True:
            slot = pattern.select(rank)
            if self.skip:
                runnable = self._next(slot - 1)
                if runnable is None:
                    return None
                slot, rank = runnable, pattern.rank(runnable)
            instant = self._instant(slot)
            if instant > limit:
                return None
            found += self._count_first(counted_to + 1, instant)
            counted_to = instant
            if found >= k:
                return instant
            rank += k - found  # slots merged or skipped at a gap: look further

    def shift(self, x: int) -> str | None:
        """How a change placed run ``x``: ``"gap"`` (SHIFT ran skipped wall times at this first instant after the
        gap), ``"fold"`` (the first instance of a repeated wall time), ``"fold-second"`` (its second), or None."""
        if not self.skip:
            for _, skipped, after in self.clock.gaps(x, x):
                if self.pattern.rank(after - 1) - self.pattern.rank(skipped - 1) > 0:
                    return "gap"
        for c, first, after in self.clock.folds(x - _REACH, x + _REACH):
            if c - (after - first) <= x < c:
                return "fold"
            if c <= x < c + (after - first):
                return "fold-second"
        return None

    def skipped(self, lo: int, hi: int) -> tuple[int, ...]:
        """The instants in ``[lo, hi]`` of the gaps whose wall times hold a slot SKIP dropped (none under SHIFT)."""
        if not self.skip:
            return ()
        rank = self.pattern.rank
        return tuple(c for c, skipped, after in self.clock.gaps(lo, hi) if rank(after - 1) > rank(skipped - 1))
