"""From a recurrence and its startTime to a slot pattern (the defaulting rules).

Rules (docs/decisions.md, "Recurrence", and the 31 documented examples):

* no schedule: Minute/Hour step ``interval`` units of elapsed time from
  startTime; Day/Week/Month/Year repeat startTime's wall-clock time of day
  (seconds included) on startTime's weekday / day of month / date;
* with a schedule, slots fire at second 0. Times of day are the cartesian
  product hours x minutes, where unset minutes mean startTime's minute, and
  unset hours mean every hour when minutes are set, else startTime's hour;
* days come from weekDays (Week), monthDays and monthlyOccurrences (Month),
  else from startTime's day within the period;
* Minute and Hour with a schedule follow dateutil's rrule: the period
  sequence (every ``interval`` minutes / hours from startTime's period) is
  filtered by hours (and minutes, for Minute), and an Hour period expands to
  the scheduled minutes (startTime's minute when unset).

The period containing startTime is period 0; weeks start on Monday.

A recurrence with ``cron`` set ignores all of the above: its slots are the cron expression's
(:mod:`.cron`), on the wall clock, whatever the startTime.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import gcd

from .calendar_math import DAY, DaySpec, civil, weekday
from .cron import cron_pattern
from .cyclic import CyclicPattern
from .model import Frequency, Recurrence, Schedule
from .monthly import MonthlyPattern
from .pattern import Pattern

__all__ = ["Expansion", "expand"]

_HOUR = 3600
_MINUTE = 60


@dataclass(frozen=True)
class Expansion:
    """A recurrence's slots; ``wall_clock`` False means the slots are instants
    (elapsed-time Minute/Hour series, which ignore the time zone)."""

    pattern: Pattern
    wall_clock: bool


def _times_of_day(schedule: Schedule, start_tod: int) -> tuple[int, ...]:
    start_hour, start_minute = start_tod // _HOUR, start_tod % _HOUR // _MINUTE
    minutes = sorted(set(schedule.minutes)) or [start_minute]
    hours = sorted(set(schedule.hours)) or (range(24) if schedule.minutes else [start_hour])
    return tuple(h * _HOUR + m * _MINUTE for h in hours for m in minutes)


def _sub_daily(
    epoch: int, unit: int, per_day: int, n: int, allowed: Iterable[int], within: tuple[int, ...]
) -> CyclicPattern:
    """Every ``n``-th period of ``unit`` seconds from ``epoch``, kept when its
    index within the day is ``allowed``, each giving slots at ``within``.

    Period ``j * n`` has day index ``(phase + j * n) % per_day``; solving that
    congruence per allowed index (instead of walking periods) gives the slots
    of one full cycle of ``lcm(n, per_day)`` periods directly.
    """
    phase = epoch // unit % per_day
    g = gcd(n, per_day)
    span = per_day // g
    inverse = pow(n // g, -1, span)
    offsets = tuple(
        (a - phase) // g * inverse % span * n * unit + w for a in allowed if (a - phase) % g == 0 for w in within
    )
    return CyclicPattern(epoch, span * n * unit, offsets)


def expand(recurrence: Recurrence, start: int, start_wall: int) -> Expansion:
    """The slot pattern of ``recurrence`` started at instant ``start`` whose
    wall-clock reading (in the recurrence's zone) is ``start_wall``."""
    if recurrence.cron is not None:
        return Expansion(cron_pattern(recurrence.cron), wall_clock=True)
    frequency, n = recurrence.frequency, recurrence.interval
    schedule = recurrence.schedule
    if schedule is not None and schedule.is_empty:
        schedule = None
    day, tod = divmod(start_wall, DAY)

    if frequency in (Frequency.MINUTE, Frequency.HOUR):
        unit = _MINUTE if frequency is Frequency.MINUTE else _HOUR
        if schedule is None:
            return Expansion(CyclicPattern(start, n * unit, (0,)), wall_clock=False)
        hours = set(schedule.hours) or set(range(24))
        if frequency is Frequency.MINUTE:
            minutes = set(schedule.minutes) or set(range(60))
            allowed = [h * 60 + m for h in hours for m in minutes]
            return Expansion(_sub_daily(start_wall - start_wall % unit, unit, 1440, n, allowed, (0,)), True)
        within = tuple(m * _MINUTE for m in sorted(set(schedule.minutes) or {tod % _HOUR // _MINUTE}))
        return Expansion(_sub_daily(start_wall - start_wall % unit, unit, 24, n, hours, within), True)

    times = (tod,) if schedule is None else _times_of_day(schedule, tod)
    if frequency is Frequency.DAY:
        return Expansion(CyclicPattern(day * DAY, n * DAY, times), True)
    if frequency is Frequency.WEEK:
        monday = day - weekday(day)
        days = sorted({d.weekday for d in schedule.week_days}) if schedule and schedule.week_days else [weekday(day)]
        offsets = tuple(d * DAY + t for d in days for t in times)
        return Expansion(CyclicPattern(monday * DAY, 7 * n * DAY, offsets), True)

    year, month, day_of_month = civil(day)
    m0 = year * 12 + month - 1
    spec = DaySpec((day_of_month,))
    if frequency is Frequency.YEAR:
        return Expansion(MonthlyPattern(m0, 12 * n, spec, times), True)
    if schedule is not None and (schedule.month_days or schedule.monthly_occurrences):
        spec = DaySpec(
            tuple(sorted(set(schedule.month_days))),
            tuple(sorted({(o.day.weekday, o.occurrence) for o in schedule.monthly_occurrences}, key=repr)),
        )
    return Expansion(MonthlyPattern(m0, n, spec, times), True)
