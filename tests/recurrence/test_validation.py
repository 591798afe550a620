"""RecurrenceError paths and messages (JSON property names, relative to the recurrence)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.recurrence import (
    Frequency,
    MonthlyOccurrence,
    OccurrenceSeries,
    Recurrence,
    RecurrenceError,
    Schedule,
    WeekDay,
    validate_recurrence,
)

F = Frequency
START = datetime(2024, 1, 10, 12, 25, tzinfo=UTC)


@pytest.mark.parametrize(
    ("recurrence", "path", "message"),
    [
        (Recurrence(F.MINUTE, 0), "interval", "1 to 1000"),
        (Recurrence(F.MINUTE, 1001), "interval", "1 to 1000"),
        (Recurrence(F.HOUR, 1001), "interval", "1 to 1000"),
        (Recurrence(F.DAY, 549), "interval", "1 to 548"),
        (Recurrence(F.WEEK, 79), "interval", "1 to 78"),
        (Recurrence(F.MONTH, 19), "interval", "1 to 18"),
        (Recurrence(F.YEAR, 2), "interval", "1 to 1"),
        (Recurrence(F.DAY, True), "interval", "integer"),  # type: ignore[arg-type]
        (Recurrence("Day", 1), "frequency", "not one of"),  # type: ignore[arg-type]
        (Recurrence(F.DAY, count=0), "count", "positive"),
        (Recurrence(F.DAY, schedule=Schedule(minutes=(0, 60))), "schedule.minutes[1]", "between 0 and 59"),
        (Recurrence(F.DAY, schedule=Schedule(hours=(24,))), "schedule.hours[0]", "between 0 and 23"),
        (Recurrence(F.DAY, schedule=Schedule(hours=(5, 17, -1))), "schedule.hours[2]", "between 0 and 23"),
        (Recurrence(F.MONTH, schedule=Schedule(month_days=(1, 0))), "schedule.monthDays[1]", "not 0"),
        (Recurrence(F.MONTH, schedule=Schedule(month_days=(-32,))), "schedule.monthDays[0]", "-31 and 31"),
        (
            Recurrence(F.MONTH, schedule=Schedule(monthly_occurrences=(MonthlyOccurrence(WeekDay.FRIDAY, 6),))),
            "schedule.monthlyOccurrences[0].occurrence",
            "-5 and 5",
        ),
        (
            Recurrence(
                F.MONTH,
                schedule=Schedule(
                    monthly_occurrences=(MonthlyOccurrence(WeekDay.FRIDAY, 1), MonthlyOccurrence(WeekDay.FRIDAY, 0))
                ),
            ),
            "schedule.monthlyOccurrences[1].occurrence",
            "not 0",
        ),
        (
            Recurrence(F.MONTH, schedule=Schedule(monthly_occurrences=(MonthlyOccurrence("friday", 1),))),  # type: ignore[arg-type]
            "schedule.monthlyOccurrences[0].day",
            "day of the week",
        ),
        (Recurrence(F.WEEK, schedule=Schedule(week_days=("sunday",))), "schedule.weekDays[0]", "day of the week"),  # type: ignore[arg-type]
        (
            Recurrence(F.DAY, schedule=Schedule(week_days=(WeekDay.MONDAY,))),
            "schedule.weekDays",
            "weekDays can only be used with frequency Week",
        ),
        (
            Recurrence(F.WEEK, schedule=Schedule(month_days=(1,))),
            "schedule.monthDays",
            "monthDays can only be used with frequency Month",
        ),
        (
            Recurrence(F.YEAR, schedule=Schedule(monthly_occurrences=(MonthlyOccurrence(WeekDay.MONDAY, 1),))),
            "schedule.monthlyOccurrences",
            "monthlyOccurrences can only be used with frequency Month",
        ),
        (Recurrence(F.DAY, time_zone="Mars/Olympus_Mons"), "timeZone", "unknown time zone"),
        (Recurrence(F.DAY, time_zone="../../etc/passwd"), "timeZone", "unknown time zone"),
        (Recurrence(F.DAY, time_zone=""), "timeZone", "IANA"),
        (Recurrence(F.DAY, time_zone="europe/berlin"), "timeZone", "did you mean 'Europe/Berlin'?"),
        (Recurrence(F.DAY, time_zone="W. Europe Standard Time"), "timeZone", "a Windows zone name; use its IANA"),
    ],
)
def test_invalid_recurrence(recurrence: Recurrence, path: str, message: str) -> None:
    with pytest.raises(RecurrenceError) as caught:
        OccurrenceSeries(START, recurrence)
    assert caught.value.path == path
    assert message in caught.value.message
    assert isinstance(caught.value, ValueError)
    with pytest.raises(RecurrenceError):
        validate_recurrence(recurrence)


def test_end_time_before_start_time() -> None:
    with pytest.raises(RecurrenceError) as caught:
        OccurrenceSeries(START, Recurrence(F.DAY, end_time=datetime(2024, 1, 1, tzinfo=UTC)))
    assert caught.value.path == "endTime"


@pytest.mark.parametrize(
    ("start", "recurrence"),
    [
        # minute periods from 00:01 every 2 minutes are all odd; minute 0 is even
        (datetime(2024, 1, 1, 0, 1, tzinfo=UTC), Recurrence(F.MINUTE, 2, schedule=Schedule(minutes=(0,)))),
        # hour periods 1, 3, 5... never reach hour 4
        (datetime(2024, 1, 1, 1, 0, tzinfo=UTC), Recurrence(F.HOUR, 2, schedule=Schedule(hours=(4,)))),
        # every 12th month from February: February never has a 30th
        (datetime(2024, 2, 1, tzinfo=UTC), Recurrence(F.MONTH, 12, schedule=Schedule(month_days=(30,)))),
        # every 12th month from April: April never has a 31st
        (datetime(2023, 4, 1, tzinfo=UTC), Recurrence(F.MONTH, 12, schedule=Schedule(month_days=(31, -31)))),
    ],
)
def test_schedule_that_never_fires_is_rejected(start: datetime, recurrence: Recurrence) -> None:
    with pytest.raises(RecurrenceError) as caught:
        OccurrenceSeries(start, recurrence)
    assert caught.value.path == "schedule"


def test_valid_edge_values_are_accepted() -> None:
    schedule = Schedule(
        minutes=(0, 59),
        hours=(0, 23),
        month_days=(1, 31, -1, -31),
        monthly_occurrences=(MonthlyOccurrence(WeekDay.MONDAY), MonthlyOccurrence(WeekDay.SUNDAY, -5)),
    )
    for recurrence in (
        Recurrence(F.MONTH, 18, schedule=schedule, count=1, time_zone="Australia/Lord_Howe"),
        Recurrence(F.MINUTE, 1000),
        Recurrence(F.DAY, 548),
        Recurrence(F.WEEK, 78, schedule=Schedule(week_days=tuple(WeekDay))),
        Recurrence(F.YEAR, schedule=Schedule(hours=(1,))),
        Recurrence(F.DAY, schedule=Schedule()),  # `{}` is no schedule
    ):
        validate_recurrence(recurrence)
        assert OccurrenceSeries(START, recurrence).first is not None


def test_error_string_names_the_path() -> None:
    error = RecurrenceError("schedule.hours[2]", "24 is not an integer between 0 and 23")
    assert str(error) == "schedule.hours[2]: 24 is not an integer between 0 and 23"
