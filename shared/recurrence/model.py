"""Value objects describing a job recurrence (JSON ``JobRecurrence``).

They carry data only: range and combination rules live in
:mod:`shared.recurrence.validation`, the wire format in :mod:`shared.model.recurrence`
(translated to these values by :func:`shared.jobstate.engine_recurrence`), and the meaning in
:class:`shared.recurrence.OccurrenceSeries`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

__all__ = ["FoldPolicy", "Frequency", "GapPolicy", "MonthlyOccurrence", "Recurrence", "Schedule", "WeekDay"]


class Frequency(str, Enum):
    """Unit of the recurrence period; values are the wire spellings."""

    MINUTE = "Minute"
    HOUR = "Hour"
    DAY = "Day"
    WEEK = "Week"
    MONTH = "Month"
    YEAR = "Year"


class WeekDay(str, Enum):
    """Day of the week; declaration order matches ``date.weekday()`` (Monday = 0)."""

    MONDAY = "Monday"
    TUESDAY = "Tuesday"
    WEDNESDAY = "Wednesday"
    THURSDAY = "Thursday"
    FRIDAY = "Friday"
    SATURDAY = "Saturday"
    SUNDAY = "Sunday"

    @property
    def weekday(self) -> int:
        """0 for Monday ... 6 for Sunday, as ``date.weekday()``."""
        return _WEEKDAY_INDEX[self]


_WEEKDAY_INDEX = {day: i for i, day in enumerate(WeekDay)}


@dataclass(frozen=True)
class MonthlyOccurrence:
    """``{day, occurrence}``: the n-th (``1..5``) or n-th-from-last (``-1..-5``)
    such weekday of the month; ``occurrence=None`` means every such weekday."""

    day: WeekDay
    occurrence: int | None = None


@dataclass(frozen=True)
class Schedule:
    """``JobRecurrenceSchedule``. Empty tuples mean "not set"; a schedule with
    every field empty is treated as no schedule at all."""

    minutes: tuple[int, ...] = ()
    hours: tuple[int, ...] = ()
    week_days: tuple[WeekDay, ...] = ()
    month_days: tuple[int, ...] = ()
    monthly_occurrences: tuple[MonthlyOccurrence, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when no field is set (``{}`` on the wire)."""
        return not (self.minutes or self.hours or self.week_days or self.month_days or self.monthly_occurrences)


class GapPolicy(str, Enum):
    """What a wall-clock series in a time zone does with a wall time a spring-forward change skips
    (:mod:`shared.recurrence.dst_policy`)."""

    SHIFT = "Shift"  # run at the first instant after the gap
    SKIP = "Skip"  # do not run


class FoldPolicy(str, Enum):
    """When a wall-clock series in a time zone runs a wall time a fall-back change repeats
    (:mod:`shared.recurrence.dst_policy`)."""

    FIRST = "First"  # once, at its first instance
    LAST = "Last"  # once, at its second instance
    BOTH = "Both"  # at both instances


@dataclass(frozen=True)
class Recurrence:
    """``JobRecurrence`` plus the ``timeZone`` extension (an IANA zone name) and its DST policies
    (``gap_policy``, ``fold_policy``; they only matter for a wall-clock series with a time zone).

    ``end_time`` is inclusive; ``count`` and ``end_time`` may both be set, and
    whichever ends the series first wins.
    """

    frequency: Frequency
    interval: int = 1
    count: int | None = None
    end_time: datetime | None = None
    schedule: Schedule | None = None
    time_zone: str | None = None
    gap_policy: GapPolicy = GapPolicy.SHIFT
    fold_policy: FoldPolicy = FoldPolicy.FIRST
    cron: str | None = None
    """A five-field cron expression (:mod:`shared.recurrence.cron`). When set, the series follows it on the wall
    clock of ``time_zone`` (UTC without one) and ``frequency``, ``interval`` and ``schedule`` are ignored;
    ``count``, ``end_time`` and startTime still bound it."""
