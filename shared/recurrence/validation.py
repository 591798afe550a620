"""Range and combination rules for a :class:`Recurrence` (docs/decisions.md, "Recurrence")."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TypeGuard
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .cron import cron_pattern
from .errors import RecurrenceError
from .model import Frequency, MonthlyOccurrence, Recurrence, Schedule, WeekDay
from .zone_names import iana_names, zone_hint

__all__ = ["INTERVAL_LIMITS", "load_zone", "validate_recurrence"]

#: Largest accepted ``interval`` per frequency (the 18-month recurrence span).
INTERVAL_LIMITS: dict[Frequency, int] = {
    Frequency.MINUTE: 1000,
    Frequency.HOUR: 1000,
    Frequency.DAY: 548,
    Frequency.WEEK: 78,
    Frequency.MONTH: 18,
    Frequency.YEAR: 1,
}


def _is_int(value: object) -> TypeGuard[int]:
    # bool is an int subclass, but `"interval": true` is a client bug, not 1.
    return isinstance(value, int) and not isinstance(value, bool)


def load_zone(name: object) -> ZoneInfo:
    """The zone for an IANA name; RecurrenceError at path ``timeZone`` otherwise."""
    if not isinstance(name, str) or not name.strip():
        raise RecurrenceError("timeZone", "timeZone must be a non-empty IANA time zone name")
    # Only IANA names: ZoneInfo also opens host files such as "localtime", whose meaning varies by machine.
    if name not in iana_names():
        raise RecurrenceError("timeZone", f"unknown time zone {name!r}: {zone_hint(name)}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise RecurrenceError("timeZone", f"unknown time zone {name!r}") from exc


def _check_int(value: object, path: str, low: int, high: int, allow_zero: bool = True) -> None:
    if not _is_int(value) or not low <= value <= high or (value == 0 and not allow_zero):
        zero = "" if allow_zero else " and not 0"
        raise RecurrenceError(path, f"{value!r} is not an integer between {low} and {high}{zero}")


def _check_ints(values: Iterable[object], path: str, low: int, high: int, allow_zero: bool = True) -> None:
    for i, value in enumerate(values):
        _check_int(value, f"{path}[{i}]", low, high, allow_zero)


def _check_only_with(field: str, values: tuple[object, ...], frequency: Frequency, allowed: Frequency) -> None:
    if values and frequency is not allowed:
        raise RecurrenceError(
            f"schedule.{field}",
            f"{field} can only be used with frequency {allowed.value}, not {frequency.value}",
        )


def _validate_schedule(schedule: Schedule, frequency: Frequency) -> None:
    if not isinstance(schedule, Schedule):
        raise RecurrenceError("schedule", "schedule must be a Schedule")
    _check_ints(schedule.minutes, "schedule.minutes", 0, 59)
    _check_ints(schedule.hours, "schedule.hours", 0, 23)
    for i, day in enumerate(schedule.week_days):
        if not isinstance(day, WeekDay):
            raise RecurrenceError(f"schedule.weekDays[{i}]", f"{day!r} is not a day of the week")
    _check_ints(schedule.month_days, "schedule.monthDays", -31, 31, allow_zero=False)
    for i, item in enumerate(schedule.monthly_occurrences):
        path = f"schedule.monthlyOccurrences[{i}]"
        if not isinstance(item, MonthlyOccurrence):
            raise RecurrenceError(path, "must be an object with day and occurrence")
        if not isinstance(item.day, WeekDay):
            raise RecurrenceError(f"{path}.day", f"{item.day!r} is not a day of the week")
        if item.occurrence is not None:
            _check_int(item.occurrence, f"{path}.occurrence", -5, 5, allow_zero=False)
    _check_only_with("weekDays", schedule.week_days, frequency, Frequency.WEEK)
    _check_only_with("monthDays", schedule.month_days, frequency, Frequency.MONTH)
    _check_only_with("monthlyOccurrences", schedule.monthly_occurrences, frequency, Frequency.MONTH)


def _validate_periodic(recurrence: Recurrence) -> None:
    """frequency and interval: what a recurrence without ``cron`` runs by (with its schedule)."""
    frequency = recurrence.frequency
    if not isinstance(frequency, Frequency):
        raise RecurrenceError("frequency", f"{frequency!r} is not one of {', '.join(f.value for f in Frequency)}")
    limit = INTERVAL_LIMITS[frequency]
    interval = recurrence.interval
    if not _is_int(interval) or not 1 <= interval <= limit:
        raise RecurrenceError(
            "interval", f"interval must be an integer from 1 to {limit} for frequency {frequency.value}"
        )


def validate_recurrence(recurrence: Recurrence) -> None:
    """Raise :class:`RecurrenceError` unless ``recurrence`` is acceptable on its own.

    Checks that need the job's ``startTime`` (``endTime`` before it, a schedule
    that can never fire for that start) are made by ``OccurrenceSeries``. With
    ``cron`` set, the expression is checked (path ``cron``, including one that
    never fires) and ``frequency``, ``interval`` and ``schedule`` are not.
    """
    if not isinstance(recurrence, Recurrence):
        raise RecurrenceError("", "recurrence must be a Recurrence")
    if recurrence.cron is not None:
        cron_pattern(recurrence.cron)
    else:
        _validate_periodic(recurrence)
    count = recurrence.count
    if count is not None and (not _is_int(count) or count < 1):
        raise RecurrenceError("count", "count must be a positive integer")
    if recurrence.end_time is not None and not isinstance(recurrence.end_time, datetime):
        raise RecurrenceError("endTime", "endTime must be a date-time")
    if recurrence.schedule is not None and recurrence.cron is None:
        _validate_schedule(recurrence.schedule, recurrence.frequency)
    if recurrence.time_zone is not None:
        load_zone(recurrence.time_zone)
