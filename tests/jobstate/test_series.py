"""Planning: from a job's definition to the instants it runs. Every planned instant is an occurrence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.jobstate import series_of
from shared.keys import JobKey
from shared.model import JobProperties
from shared.records import JobRecord

NOW = datetime(2026, 3, 4, 10, 20, 30, tzinfo=UTC)
ACTION = {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}


def job(properties: dict, created: datetime = NOW) -> JobRecord:
    parsed = JobProperties.model_validate({"action": ACTION, **properties})
    start = parsed.start_time or created
    return JobRecord(
        JobKey("s", "g", "c", "j"),
        parsed.model_copy(update={"start_time": start}),
        created_time=created,
        count_origin=max(start, created),
    )


def test_one_shot_runs_at_start_or_at_once() -> None:
    assert series_of(job({})).first(NOW) == NOW
    later = NOW + timedelta(hours=1)
    assert series_of(job({"startTime": later.isoformat()})).first(NOW) == later
    assert series_of(job({"startTime": (NOW - timedelta(days=1)).isoformat()})).first(NOW) == NOW
    assert series_of(job({})).following(NOW) is None


def test_no_start_time_plain_recurrence_runs_at_once() -> None:
    record = job({"recurrence": {"frequency": "Hour", "interval": 2}})
    assert series_of(record).first(NOW) == NOW
    assert series_of(record).following(NOW) == NOW + timedelta(hours=2)
    assert series_of(record).repeat_count(NOW) == 1


def test_no_start_time_schedule_waits_for_its_first_slot() -> None:
    record = job({"recurrence": {"frequency": "Day", "schedule": {"hours": [5], "minutes": [7]}}})
    first = series_of(record).first(NOW)
    assert first == datetime(2026, 3, 5, 5, 7, tzinfo=UTC)
    assert series_of(record).repeat_count(first) == 1


def test_past_start_is_phase_aligned_and_counted_from_creation() -> None:
    # The documented example: startTime 2015-04-07 14:00, every 2 days, now 2015-04-08 13:00 -> 04-09 14:00.
    now = datetime(2015, 4, 8, 13, 0, tzinfo=UTC)
    record = job(
        {"startTime": "2015-04-07T14:00:00Z", "recurrence": {"frequency": "Day", "interval": 2, "count": 3}},
        created=now,
    )
    first = series_of(record).first(now)
    assert first == datetime(2015, 4, 9, 14, 0, tzinfo=UTC)
    assert series_of(record).repeat_count(first) == 1  # count runs from the creation, not from the past startTime
    third = first + timedelta(days=4)
    assert series_of(record).following(first + timedelta(days=2)) == third
    assert series_of(record).following(third) is None


def test_repeat_count_of_an_instant_outside_the_series_is_zero() -> None:
    record = job({"recurrence": {"frequency": "Day", "schedule": {"hours": [5], "minutes": [7]}}})
    assert series_of(record).repeat_count(NOW) == 0  # e.g. a run-now instant
