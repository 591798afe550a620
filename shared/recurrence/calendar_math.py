"""Proleptic Gregorian arithmetic on integer day numbers and month indices.

Day number 0 is 1970-01-01; a "month index" is ``year * 12 + month - 1``.
The Gregorian calendar repeats exactly every 400 years (4800 months,
146097 days, a whole number of weeks), so per-month facts are tabulated
once over one such cycle and reused for any date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import lru_cache

__all__ = [
    "CYCLE_DAYS",
    "CYCLE_MONTHS",
    "DAY",
    "DaySpec",
    "civil",
    "month_first_day",
    "month_index",
    "month_type",
    "weekday",
]

DAY = 86_400
CYCLE_MONTHS = 4_800
CYCLE_DAYS = 146_097
_UNIX_ORDINAL = date(1970, 1, 1).toordinal()
_LAST_ORDINAL = date.max.toordinal()
_YEAR0_DAY = date(2000, 1, 1).toordinal() - _UNIX_ORDINAL - 5 * CYCLE_DAYS  # day number of 0000-01-01


def _build_cycle() -> tuple[list[int], list[tuple[int, int]]]:
    starts = [0]
    for k in range(CYCLE_MONTHS):
        year, month = divmod(k, 12)
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        length = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month]
        starts.append(starts[-1] + length)
    types = [(starts[k + 1] - starts[k], (_YEAR0_DAY + starts[k] + 3) % 7) for k in range(CYCLE_MONTHS)]
    return starts, types


_MONTH_START, _MONTH_TYPE = _build_cycle()


def weekday(day: int) -> int:
    """Monday = 0 ... Sunday = 6 (1970-01-01 was a Thursday)."""
    return (day + 3) % 7


def civil(day: int) -> tuple[int, int, int]:
    """(year, month, day-of-month) of a day number, also before year 1 (year 0, -1, ...) and after 9999."""
    # `date` stops at 0001-01-01 and 9999-12-31; a search near them may step a day past them (a wall clock
    # ahead of UTC reads year 10000 at 9999-12-31T23:59Z), and the calendar repeats every 400 years.
    ordinal = day + _UNIX_ORDINAL
    shift = 0  # whole 400-year cycles moved into date's range (negative: moved back)
    if ordinal < 1:
        shift = -((ordinal - 1) // CYCLE_DAYS)
    elif ordinal > _LAST_ORDINAL:
        shift = (_LAST_ORDINAL - ordinal) // CYCLE_DAYS
    d = date.fromordinal(ordinal + shift * CYCLE_DAYS)
    return d.year - 400 * shift, d.month, d.day


def month_index(year: int, month: int) -> int:
    return year * 12 + month - 1


def month_first_day(mi: int) -> int:
    """Day number of the 1st of month index ``mi``."""
    cycle, k = divmod(mi, CYCLE_MONTHS)
    return _YEAR0_DAY + cycle * CYCLE_DAYS + _MONTH_START[k]


def month_type(mi: int) -> tuple[int, int]:
    """(length in days, weekday of the 1st): all a day selection depends on."""
    return _MONTH_TYPE[mi % CYCLE_MONTHS]


@dataclass(frozen=True)
class DaySpec:
    """Which days of a month are selected.

    ``month_days`` are 1..31 or -31..-1 (from the end, -1 = last day);
    ``weekdays`` are ``(weekday, occurrence)`` pairs with occurrence 1..5,
    -1..-5 or None (every such weekday). As in RFC 5545 / dateutil
    (BYMONTHDAY with BYDAY), when both are given a day must satisfy both;
    within one list the values add up.
    """

    month_days: tuple[int, ...] = ()
    weekdays: tuple[tuple[int, int | None], ...] = ()

    def days(self, length: int, first_weekday: int) -> tuple[int, ...]:
        """Sorted days of a month with ``length`` days starting on ``first_weekday``."""
        return _select(self, length, first_weekday)


@lru_cache(maxsize=4096)
def _select(spec: DaySpec, length: int, first_weekday: int) -> tuple[int, ...]:
    chosen: set[int] | None = None
    if spec.month_days:
        chosen = {d if d > 0 else length + 1 + d for d in spec.month_days}
        chosen = {d for d in chosen if 1 <= d <= length}
    if spec.weekdays:
        by_weekday: set[int] = set()
        for wd, occurrence in spec.weekdays:
            first = 1 + (wd - first_weekday) % 7
            every = range(first, length + 1, 7)
            if occurrence is None:
                by_weekday.update(every)
            elif -len(every) <= occurrence <= len(every) and occurrence != 0:
                by_weekday.add(every[occurrence - 1 if occurrence > 0 else occurrence])
        chosen = by_weekday if chosen is None else chosen & by_weekday
    return tuple(sorted(chosen or ()))
