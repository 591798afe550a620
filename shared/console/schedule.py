"""A job's schedule for people: in words, and its next occurrences computed by the engine.

Contract: `describe(start, recurrence)` reads the wire JSON of `properties.startTime` and
`properties.recurrence` (as the API returns or accepts them) and answers one English sentence, e.g.
"every Monday and Friday at 09:00 Europe/London". `upcoming(start, recurrence, after, limit)` answers the
first `limit` occurrences at or after `after`, through `shared.jobstate` and the recurrence engine, so the
console and the CLI show exactly what the dispatcher will run. Both are pure (no storage, no clock other
than the `after` they are given) and raise `ScheduleError` with the offending property for input the API
would reject. Counting (`recurrence.count`) is from startTime: the API's internal count origin of a job
rewritten after its start is not on the wire, so a count-limited series may show more occurrences here than
remain (the job's `status.nextExecutionTime` stays the authority).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import ValidationError

from ..jobstate import engine_recurrence
from ..model.job import JobProperties
from ..model.recurrence import JobRecurrence, JobRecurrenceSchedule
from ..recurrence import OccurrenceSeries, RecurrenceError
from ..recurrence.validation import load_zone

MAX_OCCURRENCES = 100
_ORDINALS = {
    1: "first",
    2: "second",
    3: "third",
    4: "fourth",
    5: "fifth",
    -1: "last",
    -2: "second-to-last",
    -3: "third-to-last",
    -4: "fourth-to-last",
    -5: "fifth-to-last",
}
_UNITS = {"minute": "minute", "hour": "hour", "day": "day", "week": "week", "month": "month", "year": "year"}
_MAX_TIMES = 8  # more times of day than this are summarised, not listed


class ScheduleError(ValueError):
    """Input the API would reject; `path` names the property."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def parse(start: Any, recurrence: Any) -> JobProperties:
    """The wire values as the API's own model, or ScheduleError naming the property."""
    try:
        return JobProperties.model_validate({"startTime": start, "recurrence": recurrence})
    except ValidationError as error:
        first = error.errors()[0]
        path = "properties" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"])
        raise ScheduleError(path, first["msg"]) from None


def _series(properties: JobProperties, after: datetime) -> OccurrenceSeries:
    start = properties.start_time or after
    recurrence = properties.recurrence
    try:
        return OccurrenceSeries(start, engine_recurrence(recurrence) if recurrence else None)
    except RecurrenceError as error:
        where = f"properties.recurrence.{error.path}" if error.path else "properties.recurrence"
        raise ScheduleError(where, error.message) from None


def upcoming(start: Any, recurrence: Any, after: datetime, limit: int = 10) -> list[datetime]:
    """The first `limit` (at most MAX_OCCURRENCES) occurrences at or after `after`."""
    properties = parse(start, recurrence)
    series = _series(properties, after)
    found: list[datetime] = []
    at = series.first_at_or_after(after)
    while at is not None and len(found) < min(limit, MAX_OCCURRENCES):
        found.append(at)
        at = series.next_after(at)
    return found


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _every(frequency: str, interval: int) -> str:
    unit = _UNITS[frequency]
    return f"every {unit}" if interval == 1 else f"every {interval} {unit}s"


def _times(schedule: JobRecurrenceSchedule, local_start: datetime | None) -> str:
    minutes = sorted(set(schedule.minutes or ()))
    hours = sorted(set(schedule.hours or ()))
    if not hours and not minutes:
        if local_start is None:
            return ""
        return f"at {local_start:%H:%M}"
    if not minutes:
        minutes = [local_start.minute] if local_start else [0]
    if not hours:
        return f"at minute{'s' if len(minutes) > 1 else ''} {_join([str(m) for m in minutes])} past the hour"
    if len(hours) * len(minutes) > _MAX_TIMES:
        return f"at minutes {_join([str(m) for m in minutes])} of hours {_join([str(h) for h in hours])}"
    return "at " + _join([f"{h:02d}:{m:02d}" for h in hours for m in minutes])


def _month_day(day: int) -> str:
    if day < 0:
        return f"the {_ORDINALS.get(day, f'{-day}th-to-last')} day"
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"the {day}{suffix}"


def _days(frequency: str, interval: int, schedule: JobRecurrenceSchedule) -> str:
    """The period phrase with its days, e.g. "every Monday and Friday", "every 2 months on the 1st"."""
    week_days = [d.value for d in schedule.week_days or ()]
    month_days = list(schedule.month_days or ())
    occurrences = schedule.monthly_occurrences or ()
    if week_days and frequency == "week" and interval == 1 and not (month_days or occurrences):
        return f"every {_join(week_days)}"
    parts: list[str] = []
    if week_days:
        parts.append(f"on {_join(week_days)}")
    if month_days:
        parts.append("on " + _join([_month_day(d) for d in month_days]))
    if occurrences:
        named = [
            f"the {_ORDINALS[o.occurrence]} {o.day.value}" if o.occurrence else f"every {o.day.value}"
            for o in occurrences
        ]
        parts.append("on " + _join(named))
    return " ".join([_every(frequency, interval), *parts])


def describe(start: Any, recurrence: Any) -> str:
    """One sentence in English; raises ScheduleError for input the API would reject."""
    properties = parse(start, recurrence)
    rec: JobRecurrence | None = properties.recurrence
    start_time = properties.start_time
    if rec is None:
        return f"once at {start_time:%Y-%m-%d %H:%M} UTC" if start_time else "once, immediately"
    zone_name = rec.time_zone or "UTC"
    try:  # the API's own check, whose message names the zone most likely meant
        zone = load_zone(rec.time_zone) if rec.time_zone else ZoneInfo("UTC")
    except RecurrenceError as error:
        raise ScheduleError("properties.recurrence.timeZone", error.message) from None
    local_start = start_time.astimezone(zone) if start_time else None
    if rec.frequency is None:  # a cron recurrence (the model requires one of the two)
        return f"on cron '{rec.cron}' ({zone_name})"
    frequency, interval = rec.frequency.value.lower(), rec.interval or 1
    schedule = rec.schedule if rec.schedule is not None and not rec.schedule.is_empty() else None
    if schedule is None:
        phrase = _every(frequency, interval)
        if frequency in ("day", "week", "month", "year") and local_start is not None:
            on = {
                "week": f" on {local_start:%A}",
                "month": f" on {_month_day(local_start.day)}",
                "year": f" on {local_start:%d %B}",
            }.get(frequency, "")
            phrase += f"{on} at {local_start:%H:%M} {zone_name}"
        elif rec.time_zone:
            phrase += f" ({zone_name})"
    else:
        times = _times(schedule, local_start)
        zone_matters = bool(
            schedule.hours
            or schedule.week_days
            or schedule.month_days
            or schedule.monthly_occurrences
            or frequency not in ("minute", "hour")
        )
        phrase = (
            _days(frequency, interval, schedule)
            + (f" {times}" if times else "")
            + (f" {zone_name}" if zone_matters else "")
        )
    if rec.count is not None:
        phrase += f", {rec.count} time{'s' if rec.count != 1 else ''}"
    if rec.end_time is not None:  # in the schedule's zone, as its times are
        phrase += f", until {rec.end_time.astimezone(zone):%Y-%m-%d %H:%M} {zone_name}"
    return phrase
