"""``OccurrenceSeries``: the occurrences of one job, answered in constant time."""

from __future__ import annotations

from datetime import datetime, timedelta

from .clock import LAST_INSTANT, UtcClock, ZoneClock, ceil_seconds, floor_seconds, from_seconds
from .dst_policy import Runs, check_policies
from .errors import RecurrenceError
from .expansion import expand
from .model import Recurrence
from .pattern import Pattern
from .validation import load_zone, validate_recurrence

__all__ = ["OccurrenceSeries"]

_UTC = UtcClock()


class OccurrenceSeries:
    """The instants at which a job with ``start_time`` and ``recurrence`` runs.

    Like an APScheduler trigger, a series is a small immutable object that
    answers "when next?"; unlike one, it never iterates: every query jumps to
    the period containing the asked instant (periods since startTime //
    interval) and searches at most a few periods, and counting is arithmetic.

    Contract:

    * occurrences are whole-second, timezone-aware UTC datetimes, never
      before ``start_time`` (whose microseconds are dropped);
    * ``count`` counts occurrences from ``count_origin`` (default
      ``start_time``): index 1 is the first occurrence at or after it.
      Occurrences between ``start_time`` and ``count_origin`` still belong to
      the series but carry no index (:meth:`index_of` rejects them);
    * ``end_time`` is inclusive; with ``count`` too, whichever ends first wins;
    * ``recurrence=None`` is a one-shot series: the single occurrence
      ``start_time`` (``count_origin`` does not apply);
    * naive datetimes, in arguments and in ``recurrence.end_time``, mean UTC;
    * the calendar ends at 9999-12-31T23:59:59Z: no occurrence lies after it (the search answers None there,
      as at the end of a finite series), and a ``count`` reaching past it ends nothing;
    * a wall-clock series with a ``time_zone`` places the wall times a DST change skips or repeats by the
      recurrence's ``gap_policy`` and ``fold_policy`` (:mod:`.dst_policy`; by default a skipped wall time runs
      at the first instant after the gap, a repeated one at its first instance). Occurrences are distinct
      instants: ``count`` and indexes count a wall time run twice (``Both``) twice, and one not run
      (``Skip``) not at all.

    Raises :class:`RecurrenceError` for an invalid recurrence, an ``endTime``
    before ``start_time``, or a schedule that can never fire for this start.
    """

    __slots__ = (
        "recurrence",
        "_start",
        "_origin",
        "_pattern",
        "_clock",
        "_runs",
        "_elapsed",
        "_end",
        "_limit",
        "_first",
    )

    def __init__(
        self, start_time: datetime, recurrence: Recurrence | None, count_origin: datetime | None = None
    ) -> None:
        if not isinstance(start_time, datetime):
            raise RecurrenceError("startTime", "startTime must be a date-time")
        self.recurrence = recurrence
        self._start = floor_seconds(start_time)
        self._origin = self._start if count_origin is None else max(self._start, ceil_seconds(count_origin))
        self._pattern: Pattern | None = None
        self._clock: UtcClock = _UTC
        self._runs: Runs | None = None
        self._elapsed = 0
        self._end: int | None = self._start
        self._limit: int | None = self._start
        self._first: int | None = self._start
        if recurrence is None:
            self._origin = self._start
            return
        validate_recurrence(recurrence)
        check_policies(recurrence)
        clock = ZoneClock(load_zone(recurrence.time_zone)) if recurrence.time_zone else _UTC
        expansion = expand(recurrence, self._start, clock.wall(self._start))
        self._pattern = expansion.pattern
        if expansion.wall_clock:
            self._clock = clock
        else:
            self._elapsed = expansion.pattern.min_gap() or 0
        if self._pattern.is_empty():
            raise RecurrenceError(
                "schedule",
                "the schedule never produces an occurrence with this interval and startTime",
            )
        self._runs = Runs(self._pattern, self._clock, recurrence.gap_policy, recurrence.fold_policy)
        self._end = self._limit = None
        if recurrence.end_time is not None:
            end_time = floor_seconds(recurrence.end_time)
            if end_time < self._start:
                raise RecurrenceError("endTime", "endTime must not be before startTime")
            last = self._upto(end_time)
            # Nothing at or before endTime: an empty series, which start - 1 encodes.
            self._end = self._start - 1 if last is None else last
            self._limit = end_time
        if recurrence.count is not None:
            nth = self._nth(recurrence.count)  # None: beyond year 9999, no limit in practice
            if nth is not None and (self._end is None or nth < self._end):
                self._end = nth
            if nth is not None and (self._limit is None or nth < self._limit):
                self._limit = nth
        first = self._after(self._start - 1)
        self._first = first if first is not None and (self._end is None or first <= self._end) else None

    def __repr__(self) -> str:
        return f"OccurrenceSeries({from_seconds(self._start).isoformat()}, {self.recurrence!r})"

    # -- unbounded primitives on Unix seconds (ignore count and endTime) ------------

    def _after(self, x: int) -> int | None:
        """First occurrence > x, not before startTime."""
        if self._runs is None:
            return self._start if x < self._start else None
        x = max(x, self._start - 1)
        if x >= LAST_INSTANT:
            return None
        instant = self._runs.after(x)
        return None if instant is None or instant > LAST_INSTANT else instant

    def _upto(self, x: int) -> int | None:
        """Last occurrence <= x, not before startTime."""
        if self._runs is None:
            return self._start if x >= self._start else None
        if x < self._start:
            return None
        return self._runs.upto(min(x, LAST_INSTANT), self._start)

    def _count(self, lo: int, x: int) -> int:
        """Distinct occurrence instants in [lo, x] (slots a DST gap merges count once)."""
        assert self._runs is not None
        return self._runs.count(lo, x)

    def _nth(self, k: int) -> int | None:
        """The k-th occurrence at or after count_origin (None past year 9999)."""
        assert self._runs is not None
        return self._runs.nth(self._origin, k, LAST_INSTANT)

    # -- public API -----------------------------------------------------------------

    def _bounded(self, instant: int | None) -> datetime | None:
        if instant is None or (self._end is not None and instant > self._end):
            return None
        return from_seconds(instant)

    def next_after(self, t: datetime) -> datetime | None:
        """The first occurrence strictly after ``t`` (aware UTC), honouring
        ``count`` and ``endTime``; None when the series has ended."""
        return self._bounded(self._after(floor_seconds(t)))

    def first_at_or_after(self, t: datetime) -> datetime | None:
        """The first occurrence at or after ``t``; None when the series has ended."""
        return self._bounded(self._after(ceil_seconds(t) - 1))

    def last_at_or_before(self, t: datetime) -> datetime | None:
        """The latest occurrence <= ``t`` (the one to run after an outage); None if none."""
        x = floor_seconds(t)
        if self._end is not None:
            x = min(x, self._end)
        return None if self._first is None else self._bounded(self._upto(x))

    def index_of(self, occurrence: datetime) -> int:
        """1-based index of ``occurrence`` counted from ``count_origin`` (history
        ``repeatCount``), computed arithmetically.

        Raises ValueError if ``occurrence`` is not an occurrence of the series
        or lies before ``count_origin``.
        """
        x = floor_seconds(occurrence)
        if occurrence.microsecond or self._bounded(self._after(x - 1)) != from_seconds(x):
            raise ValueError(f"{occurrence.isoformat()} is not an occurrence of this series")
        if x < self._origin:
            raise ValueError(f"{occurrence.isoformat()} is before the count origin")
        return 1 if self._pattern is None else self._count(self._origin, x)

    def min_gap(self) -> timedelta | None:
        """Smallest gap between consecutive occurrences of the expanded schedule,
        ignoring count/endTime; None for a one-shot series.

        Gaps are nominal: wall-clock distances for calendar schedules (a DST
        change does not shrink them, nor fold policy Both, which runs a repeated
        wall time twice) and exact for elapsed Minute/Hour series.
        """
        if self._pattern is None:
            return None
        gap = self._elapsed or self._pattern.min_gap()
        return None if gap is None else timedelta(seconds=gap)

    def dst_shift(self, occurrence: datetime) -> str | None:
        """How a DST change placed ``occurrence`` (an occurrence of the series): ``"gap"`` when a wall time it
        names was skipped by a spring-forward change and runs at the first instant after it (gap policy Shift),
        ``"fold"`` when it is the first instance of a repeated wall time, ``"fold-second"`` when the second
        (fold policy Last, or the second run of Both); None otherwise, and always for a series without a time
        zone."""
        if self._runs is None or not isinstance(self._clock, ZoneClock):
            return None
        return self._runs.shift(floor_seconds(occurrence))

    def dst_skipped(self, after: datetime, until: datetime) -> tuple[datetime, ...]:
        """The instants of the spring-forward changes in (``after``, ``until``] at which gap policy Skip dropped a
        slot of the series (one from startTime up to its end: endTime, or the last occurrence by count), in
        order; empty under Shift and for a series without a time zone."""
        if self._runs is None:
            return ()
        lo, hi = max(floor_seconds(after) + 1, self._start), floor_seconds(until)
        if self._limit is not None:
            hi = min(hi, self._limit)
        return tuple(from_seconds(c) for c in self._runs.skipped(lo, hi))

    @property
    def ends_by(self) -> str | None:
        """What ends a finite recurring series: ``"count"`` or ``"endTime"`` (whichever comes first); None for
        an endless or one-shot series."""
        if self._pattern is None or self._end is None or self.recurrence is None:
            return None
        count = self.recurrence.count
        if count is not None and self._nth(count) == self._end:
            return "count"
        return "endTime"

    @property
    def start(self) -> datetime:
        """startTime, normalised to UTC with microseconds dropped."""
        return from_seconds(self._start)

    @property
    def first(self) -> datetime | None:
        """The first occurrence, None if the series is empty (endTime before it)."""
        return None if self._first is None else from_seconds(self._first)

    @property
    def is_finite(self) -> bool:
        """True when the series ends (one-shot, count or endTime)."""
        return self._end is not None

    @property
    def end(self) -> datetime | None:
        """The last occurrence if the series is finite (count or endTime), else None.

        Also None for a finite series with no occurrence at all (see :attr:`first`).
        """
        if self._end is None or self._first is None:
            return None
        return from_seconds(self._end)
