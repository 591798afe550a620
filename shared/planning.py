"""From a job's definition to its occurrences: the bridge between the wire model and the pure engine.

Rules (docs/decisions.md, "Recurrence"): occurrences are anchored at startTime and past ones are skipped;
a job without startTime is anchored at its creation (so a plain recurrence runs at once, a schedule at
its first slot), and keeps that anchor (`JobRecord.anchor`) through rewrites that still give none; a job
without recurrence runs once, at startTime, or immediately when that is absent or past. Every planned
instant is therefore an occurrence of the job's series.
"""

from __future__ import annotations

from datetime import datetime

from .model import JobRecurrence
from .records import JobRecord
from .recurrence import (
    Frequency,
    MonthlyOccurrence,
    OccurrenceSeries,
    Recurrence,
    Schedule,
    WeekDay,
)


def engine_recurrence(recurrence: JobRecurrence) -> Recurrence:
    """The wire recurrence as the engine's pure value; `{}` as schedule means no schedule."""
    schedule = recurrence.schedule
    engine_schedule = None
    if schedule is not None and not schedule.is_empty():
        engine_schedule = Schedule(
            minutes=tuple(schedule.minutes or ()),
            hours=tuple(schedule.hours or ()),
            week_days=tuple(WeekDay(d.value) for d in schedule.week_days or ()),
            month_days=tuple(schedule.month_days or ()),
            monthly_occurrences=tuple(
                MonthlyOccurrence(WeekDay(o.day.value), o.occurrence) for o in schedule.monthly_occurrences or ()
            ),
        )
    return Recurrence(
        frequency=Frequency(recurrence.frequency.value),
        interval=recurrence.interval or 1,
        count=recurrence.count,
        end_time=recurrence.end_time,
        schedule=engine_schedule,
        time_zone=recurrence.time_zone,
    )


def start_of(job: JobRecord) -> datetime:
    """Where the job's series starts: its startTime, else its anchor (a job written without startTime)."""
    start = job.properties.start_time or job.anchor or job.created_time
    assert start is not None, "a stored job has a startTime, an anchor or a creation time"
    return start


def series_of(job: JobRecord) -> OccurrenceSeries:
    """The job's occurrence series."""
    recurrence = job.properties.recurrence
    return OccurrenceSeries(start_of(job), engine_recurrence(recurrence) if recurrence else None, job.count_origin)


def first_occurrence(job: JobRecord, now: datetime) -> datetime | None:
    """The occurrence a newly written (or re-enabled) job runs first, or None when it has none left."""
    start = job.properties.start_time
    if job.properties.recurrence is None:
        return max(start, now) if start else now
    return series_of(job).first_at_or_after(now)


def following_occurrence(job: JobRecord, occurrence: datetime) -> datetime | None:
    """The occurrence after `occurrence`, or None when the series ends there."""
    if job.properties.recurrence is None:
        return None
    return series_of(job).next_after(occurrence)


def latest_missed(job: JobRecord, now: datetime) -> datetime | None:
    """The latest occurrence at or before now (what runs once after an outage)."""
    if job.properties.recurrence is None:
        return None
    return series_of(job).last_at_or_before(now)


def repeat_count(job: JobRecord, occurrence: datetime) -> int:
    """History `repeatCount`: the occurrence's 1-based index in its series; 0 for an instant outside the
    counted series (run-now, or an occurrence before the count origin)."""
    if job.properties.recurrence is None:
        return 1
    try:
        return series_of(job).index_of(occurrence)
    except ValueError:
        return 0
