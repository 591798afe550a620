"""Instants, wall-clock time and the DST rules that connect them.

Instants are integer Unix seconds; wall-clock times are integer seconds
since 1970-01-01T00:00 as read on the zone's clock. ``to_instant`` maps a wall time to
an instant by the default DST policy (docs/decisions.md): a wall time inside a spring-forward gap
runs at the first instant after the gap, a repeated wall time runs at its
first instance. That mapping is monotonic (never decreasing), which lets the
series search on the wall-clock axis and convert only the answer. The other policies (skip a
gap's wall times; run a repeated one at its second instance, or at both) are built on it, with the
per-year lists of ``gaps`` and ``folds``, in :mod:`.dst_policy`.

Instants run from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z (`FIRST_INSTANT`, `LAST_INSTANT`: what a
datetime holds). Wall times may lie a few hours beyond (9999-12-31T23:59Z reads 10000-01-01T13:59 in
Pacific/Kiritimati), where no datetime reaches: within two days of either end a zone's offset is taken as
the one in force two days inside (no zone changes its clocks in the last days of December or the first
of January there), so every mapping stays defined up to the calendar's ends.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from .calendar_math import CYCLE_DAYS, DAY, civil

__all__ = [
    "FIRST_INSTANT",
    "LAST_INSTANT",
    "UtcClock",
    "ZoneClock",
    "ceil_seconds",
    "floor_seconds",
    "from_seconds",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NAIVE_EPOCH = datetime(1970, 1, 1)
_SECOND = timedelta(seconds=1)


def _offset_seconds(local: datetime) -> int:
    """The UTC offset of a ZoneInfo-aware datetime in seconds (a ZoneInfo always has one; typed Optional)."""
    return (local.utcoffset() or timedelta(0)) // _SECOND


_PROBE_STEP = 7 * DAY  # finer than any pair of real-world transitions


def _aware(dt: datetime) -> datetime:
    # The wire format says a date-time without offset is UTC; accept the same here.
    return dt if dt.tzinfo is not None and dt.utcoffset() is not None else dt.replace(tzinfo=UTC)


def floor_seconds(dt: datetime) -> int:
    """Unix seconds of ``dt``, microseconds dropped (naive means UTC)."""
    return (_aware(dt) - _EPOCH) // _SECOND


def ceil_seconds(dt: datetime) -> int:
    """Unix seconds of ``dt`` rounded up to a whole second."""
    return -((_EPOCH - _aware(dt)) // _SECOND)


FIRST_INSTANT = floor_seconds(datetime.min)
LAST_INSTANT = floor_seconds(datetime.max)
# Where a zone's local time is still a datetime whatever its offset (offsets stay well within a day).
_SAFE_FIRST = FIRST_INSTANT + 2 * DAY
_SAFE_LAST = LAST_INSTANT - 2 * DAY


def _safe(x: int) -> int:
    return min(max(x, _SAFE_FIRST), _SAFE_LAST)


def from_seconds(x: int) -> datetime:
    """Aware UTC datetime for Unix seconds ``x``."""
    return _EPOCH + timedelta(seconds=x)


class UtcClock:
    """The identity clock: wall time is UTC (the default, and elapsed-time series)."""

    def wall(self, x: int) -> int:
        """Wall-clock reading at instant ``x``."""
        return x

    def wall_bound(self, x: int) -> int:
        """Largest wall time ``w`` such that every wall time up to ``w`` maps to an instant <= x."""
        return x

    def to_instant(self, w: int) -> int:
        """The instant at which wall time ``w`` runs."""
        return w

    def skipped(self, w: int) -> bool:
        """True when a spring-forward gap skips wall time ``w`` (the clock never reads it)."""
        return False

    def gaps(self, lo: int, hi: int) -> tuple[tuple[int, int, int], ...]:
        """Spring-forward gaps ``(instant, first skipped wall time, wall time after)`` in [lo, hi]."""
        return ()

    def folds(self, lo: int, hi: int) -> tuple[tuple[int, int, int], ...]:
        """Fall-back changes ``(instant, first repeated wall time, wall time after the repetition)`` in [lo, hi].

        The repeated wall times ``[first, after)`` are read first in the ``after - first`` seconds before the
        instant, then again from it on."""
        return ()


class ZoneClock(UtcClock):
    """Wall-clock time of an IANA zone (the ``timeZone`` extension)."""

    def __init__(self, zone: ZoneInfo) -> None:
        self.zone = zone

    def _offset(self, x: int) -> int:
        return _offset_seconds(datetime.fromtimestamp(_safe(x), self.zone))

    def _transition(self, lo: int, hi: int) -> int:
        """First instant in (lo, hi] with the offset in force at ``hi`` (one change assumed)."""
        target = self._offset(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._offset(mid) == target:
                hi = mid
            else:
                lo = mid
        return hi

    def wall(self, x: int) -> int:
        return x + self._offset(x)

    def wall_bound(self, x: int) -> int:
        if x != _safe(x):
            return x + self._offset(x)
        local = datetime.fromtimestamp(x, self.zone)
        offset = _offset_seconds(local)
        if not local.fold:
            return x + offset
        # x is in the second pass of a repeated interval: every repeated wall
        # time already ran in the first pass, and the next one to run is the
        # first wall time after the repetition ends.
        earlier = _offset_seconds(local.replace(fold=0))
        change = self._transition(x - (earlier - offset), x)
        return change + earlier - 1

    def to_instant(self, w: int) -> int:
        if w != _safe(w):
            return w - self._offset(w)
        local = (_NAIVE_EPOCH + timedelta(seconds=w)).replace(tzinfo=self.zone)
        before = _offset_seconds(local)
        after = _offset_seconds(local.replace(fold=1))
        if after <= before:
            return w - before  # unambiguous, or the first of two instances
        return self._transition(w - after, w - before)  # skipped: when the clock jumps

    def skipped(self, w: int) -> bool:
        if w != _safe(w):
            return False
        local = (_NAIVE_EPOCH + timedelta(seconds=w)).replace(tzinfo=self.zone)
        return _offset_seconds(local.replace(fold=1)) > _offset_seconds(local)

    def gaps(self, lo: int, hi: int) -> tuple[tuple[int, int, int], ...]:
        return self._changes(lo, hi, 0)

    def folds(self, lo: int, hi: int) -> tuple[tuple[int, int, int], ...]:
        return self._changes(lo, hi, 1)

    def _changes(self, lo: int, hi: int, kind: int) -> tuple[tuple[int, int, int], ...]:
        if hi < lo:
            return ()
        first, last = civil(lo // DAY)[0], civil(hi // DAY)[0]
        return tuple(
            change
            for year in range(max(first, 1), min(last, 9999) + 1)
            for change in _changes_in_year(self, year)[kind]
            if lo <= change[0] <= hi
        )

    def __hash__(self) -> int:
        return hash(self.zone)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ZoneClock) and other.zone == self.zone


_Changes = tuple[tuple[int, int, int], ...]


# Past the tz database's listed transitions a zone follows its POSIX rule ("second Sunday of March, 02:00"), and such
# a rule repeats every 400 years: the Gregorian cycle is 146,097 days, a whole number of weeks. So a year from
# _RULE_REPEATS_FROM on (well past the last listed transitions, forecasts of the 2080s) has the changes of its year
# in the 400 before, shifted, and a zone is probed for at most that many years, however far a query reaches.
_RULE_REPEATS_FROM = 2500
_CYCLE_YEARS = 400


def _changes_in_year(clock: ZoneClock, year: int) -> tuple[_Changes, _Changes]:
    """(gaps, folds) whose instant lies in ``year`` (UTC), as ``ZoneClock.gaps`` and ``ZoneClock.folds`` give them."""
    if not _RULE_REPEATS_FROM <= year < 9999:  # 9999 is probed itself: its end is clamped (`_safe`)
        return _probed(clock, year)
    cycles, offset = divmod(year - _RULE_REPEATS_FROM, _CYCLE_YEARS)
    shift = (cycles + 1) * CYCLE_DAYS * DAY
    gaps, folds = _probed(clock, _RULE_REPEATS_FROM - _CYCLE_YEARS + offset)
    return _shifted(gaps, shift), _shifted(folds, shift)


def _shifted(changes: _Changes, seconds: int) -> _Changes:
    return tuple((instant + seconds, first + seconds, after + seconds) for instant, first, after in changes)


@lru_cache(maxsize=1 << 15)  # a zone's years up to _RULE_REPEATS_FROM: a few MB at most, mostly empty years
def _probed(clock: ZoneClock, year: int) -> tuple[_Changes, _Changes]:
    """The changes of ``year`` found by probing the zone's offset."""
    # zoneinfo does not expose its transition list, so probe the offset weekly
    # and bisect each change; cached per zone and year.
    lo = floor_seconds(datetime(year, 1, 1, tzinfo=UTC))
    hi = floor_seconds(datetime(year + 1, 1, 1, tzinfo=UTC)) if year < 9999 else LAST_INSTANT
    probes = [*range(lo, hi, _PROBE_STEP), hi]
    gaps, folds = [], []
    previous, previous_offset = probes[0], clock._offset(probes[0])
    for probe in probes[1:]:
        offset = clock._offset(probe)
        if offset != previous_offset:
            change = clock._transition(previous, probe)
            old, new = clock._offset(change - 1), clock._offset(change)
            if new > old:
                gaps.append((change, change + old, change + new))
            elif new < old:
                folds.append((change, change + new, change + old))
        previous, previous_offset = probe, offset
    return tuple(gaps), tuple(folds)
