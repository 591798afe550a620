"""count, endTime, count_origin, index_of, last_at_or_before, min_gap and edge cases.

Expected values are derived by hand in the comments.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from shared.recurrence import Frequency, MonthlyOccurrence, OccurrenceSeries, Recurrence, Schedule, WeekDay

F = Frequency
MON, TUE, FRI = WeekDay.MONDAY, WeekDay.TUESDAY, WeekDay.FRIDAY


def z(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def take(series: OccurrenceSeries, after: datetime, n: int) -> list[datetime]:
    out: list[datetime] = []
    t: datetime | None = after
    while len(out) < n and (t := series.next_after(t)) is not None:
        out.append(t)
    return out


# -- count and index_of ------------------------------------------------------------


def test_count_one_million_minutes() -> None:
    # 999,999 minutes after 2024-01-01 00:00 = 694 days 10:39 -> 2025-11-25 10:39.
    series = OccurrenceSeries(z("2024-01-01T00:00:00"), Recurrence(F.MINUTE, count=1_000_000))
    end = z("2025-11-25T10:39:00")
    assert series.end == end
    assert series.index_of(end) == 1_000_000
    assert series.index_of(end - timedelta(minutes=1)) == 999_999
    assert series.next_after(end - timedelta(seconds=30)) == end
    assert series.next_after(end) is None
    assert series.last_at_or_before(z("2030-01-01T00:00:00")) == end


def test_count_one_million_with_a_schedule() -> None:
    # Day with minutes [0, 30]: 48 a day from 00:00; the millionth is slot 999,999
    # after the first: 20,833 days (999,984 slots) + 15 half-hours -> day 20,833 07:30.
    rec = Recurrence(F.DAY, count=1_000_000, schedule=Schedule(minutes=(0, 30)))
    series = OccurrenceSeries(z("2000-01-01T00:00:00"), rec)
    end = datetime(2000, 1, 1, 7, 30, tzinfo=UTC) + timedelta(days=20_833)
    assert series.end == end
    assert series.index_of(end) == 1_000_000


def test_count_daily_five_from_monday_ends_friday() -> None:
    # Docs: "executed daily with count 5 and start date of Monday, the job completes after execution on Friday".
    series = OccurrenceSeries(z("2024-01-08T10:00:00"), Recurrence(F.DAY, count=5))
    assert series.end == z("2024-01-12T10:00:00")
    assert [series.index_of(z(f"2024-01-{d:02}T10:00:00")) for d in range(8, 13)] == [1, 2, 3, 4, 5]


def test_count_is_counted_from_count_origin() -> None:
    # Daily 09:00 since Jan 1; counted from Jan 3 12:00: #1 is Jan 4, #5 Jan 8.
    rec = Recurrence(F.DAY, count=5)
    series = OccurrenceSeries(z("2024-01-01T09:00:00"), rec, count_origin=z("2024-01-03T12:00:00"))
    assert series.end == z("2024-01-08T09:00:00")
    assert series.index_of(z("2024-01-04T09:00:00")) == 1
    assert series.next_after(z("2024-01-01T10:00:00")) == z("2024-01-02T09:00:00")  # still anchored at startTime
    with pytest.raises(ValueError, match="count origin"):
        series.index_of(z("2024-01-02T09:00:00"))


def test_count_origin_at_an_occurrence_counts_it() -> None:
    series = OccurrenceSeries(z("2024-01-01T09:00:00"), Recurrence(F.DAY, count=2), z("2024-01-03T09:00:00"))
    assert series.index_of(z("2024-01-03T09:00:00")) == 1
    assert series.end == z("2024-01-04T09:00:00")


def test_index_of_rejects_non_occurrences() -> None:
    series = OccurrenceSeries(z("2024-01-01T09:00:00"), Recurrence(F.DAY, count=3))
    for bad in ("2024-01-02T09:00:01", "2024-01-01T08:00:00", "2024-01-04T09:00:00"):
        with pytest.raises(ValueError):
            series.index_of(z(bad))
    with pytest.raises(ValueError):
        series.index_of(z("2024-01-02T09:00:00").replace(microsecond=1))


def test_index_of_fifth_fridays_far_ahead() -> None:
    # From 2024-01-10: 5th Fridays in Mar, May, Aug, Nov 2024 -> #4 is 11-29.
    rec = Recurrence(F.MONTH, count=1000, schedule=Schedule(monthly_occurrences=(MonthlyOccurrence(FRI, 5),)))
    series = OccurrenceSeries(z("2024-01-10T12:25:00"), rec)
    assert series.index_of(z("2024-11-29T12:25:00")) == 4
    assert series.end is not None and series.index_of(series.end) == 1000
    assert series.end.weekday() == 4 and series.end.day >= 29


def test_year_on_29_february_counts_leap_years_only() -> None:
    series = OccurrenceSeries(z("2096-02-29T12:00:00"), Recurrence(F.YEAR))
    assert take(series, z("2096-02-29T12:00:00"), 2) == [z("2104-02-29T12:00:00"), z("2108-02-29T12:00:00")]
    assert series.index_of(z("2108-02-29T12:00:00")) == 3  # 2096, 2104, 2108 (2100 is not leap)
    assert series.min_gap() == timedelta(days=1461)


# -- endTime -------------------------------------------------------------------------


def test_end_time_is_inclusive() -> None:
    series = OccurrenceSeries(z("2024-01-01T00:00:00"), Recurrence(F.HOUR, end_time=z("2024-01-01T05:00:00")))
    assert series.end == z("2024-01-01T05:00:00")
    assert series.next_after(z("2024-01-01T04:00:00")) == z("2024-01-01T05:00:00")
    assert series.next_after(z("2024-01-01T05:00:00")) is None
    early = OccurrenceSeries(z("2024-01-01T00:00:00"), Recurrence(F.HOUR, end_time=z("2024-01-01T04:59:59")))
    assert early.end == z("2024-01-01T04:00:00")


@pytest.mark.parametrize(
    ("count", "end_time", "expected_end"),
    [
        (10, "2024-01-05T00:00:00", "2024-01-05T00:00:00"),  # endTime first
        (3, "2024-01-05T00:00:00", "2024-01-03T00:00:00"),  # count first
        (5, "2024-01-05T00:00:00", "2024-01-05T00:00:00"),  # both on the same occurrence
    ],
)
def test_count_and_end_time_whichever_first(count: int, end_time: str, expected_end: str) -> None:
    series = OccurrenceSeries(z("2024-01-01T00:00:00"), Recurrence(F.DAY, count=count, end_time=z(end_time)))
    assert series.end == z(expected_end)
    assert series.next_after(z(expected_end)) is None


def test_end_time_before_first_scheduled_occurrence_gives_empty_series() -> None:
    rec = Recurrence(F.DAY, schedule=Schedule(hours=(5,)), end_time=z("2024-01-01T20:00:00"))
    series = OccurrenceSeries(z("2024-01-01T12:00:00"), rec)
    assert series.first is None and series.end is None and series.is_finite
    assert series.next_after(z("2023-01-01T00:00:00")) is None
    assert series.last_at_or_before(z("2030-01-01T00:00:00")) is None


def test_infinite_series_has_no_end() -> None:
    series = OccurrenceSeries(z("2024-01-01T00:00:00"), Recurrence(F.WEEK))
    assert series.end is None and not series.is_finite and series.first == z("2024-01-01T00:00:00")


# -- last_at_or_before ---------------------------------------------------------------


def test_last_at_or_before() -> None:
    series = OccurrenceSeries(z("2024-01-01T09:00:00"), Recurrence(F.DAY, count=3))
    assert series.last_at_or_before(z("2024-01-02T08:59:59")) == z("2024-01-01T09:00:00")
    assert series.last_at_or_before(z("2024-01-02T09:00:00")) == z("2024-01-02T09:00:00")
    assert series.last_at_or_before(z("2024-01-01T08:00:00")) is None
    assert series.last_at_or_before(z("2024-02-01T00:00:00")) == z("2024-01-03T09:00:00")  # capped by count


def test_latest_missed_occurrence_after_an_outage_years_later() -> None:
    # First Friday 05:00 since 2015; an outage until 2041-03-05 (Tuesday): latest is Friday 2041-03-01.
    rec = Recurrence(
        F.MONTH, schedule=Schedule(minutes=(0,), hours=(5,), monthly_occurrences=(MonthlyOccurrence(FRI, 1),))
    )
    series = OccurrenceSeries(z("2015-01-01T00:00:00"), rec)
    assert series.last_at_or_before(z("2041-03-05T00:00:00")) == z("2041-03-01T05:00:00")


# -- anchoring, normalisation, one-shot ----------------------------------------------


@pytest.mark.parametrize("start", ["2015-04-07T14:00:00", "2015-04-05T14:00:00", "2015-04-01T14:00:00"])
def test_documented_phase_alignment(start: str) -> None:
    # Docs: now 2015-04-08 13:00, {day, interval 2} -> 04-09, 04-11, 04-13, 04-15 at 14:00.
    series = OccurrenceSeries(z(start), Recurrence(F.DAY, interval=2))
    expected = [z(f"2015-04-{d:02}T14:00:00") for d in (9, 11, 13, 15)]
    assert take(series, z("2015-04-08T13:00:00"), 4) == expected


def test_offsets_are_normalised_to_utc_and_microseconds_dropped() -> None:
    start = datetime(2024, 1, 1, 10, 0, 0, 750_000, tzinfo=timezone(timedelta(hours=-8)))
    series = OccurrenceSeries(start, Recurrence(F.DAY))
    assert series.first == z("2024-01-01T18:00:00")
    assert series.first is not None and series.first.tzinfo is UTC
    assert series.next_after(z("2024-01-01T18:00:00")) == z("2024-01-02T18:00:00")
    assert series.first_at_or_after(z("2024-01-01T18:00:00").replace(microsecond=1)) == z("2024-01-02T18:00:00")


def test_naive_datetimes_mean_utc() -> None:
    series = OccurrenceSeries(datetime(2024, 1, 1, 9), Recurrence(F.DAY))
    assert series.next_after(datetime(2024, 1, 1, 9)) == z("2024-01-02T09:00:00")


def test_simple_recurrence_keeps_seconds_schedule_uses_second_zero() -> None:
    start = z("2024-01-01T09:00:42")
    assert OccurrenceSeries(start, Recurrence(F.HOUR)).next_after(start) == z("2024-01-01T10:00:42")
    scheduled = OccurrenceSeries(start, Recurrence(F.DAY, schedule=Schedule(hours=(9, 10))))
    assert scheduled.first == z("2024-01-01T10:00:00")  # 09:00:00 is before startTime


def test_one_shot_series() -> None:
    start = z("2024-01-01T09:00:00")
    series = OccurrenceSeries(start, None, count_origin=z("2024-06-01T00:00:00"))
    assert series.next_after(start - timedelta(seconds=1)) == start
    assert series.next_after(start) is None
    assert series.first_at_or_after(start) == start
    assert series.last_at_or_before(start + timedelta(days=9)) == start
    assert series.index_of(start) == 1 and series.end == start and series.min_gap() is None


def test_jump_to_far_future_does_not_iterate() -> None:
    series = OccurrenceSeries(z("1970-01-01T00:00:00"), Recurrence(F.MINUTE, count=10**12))
    assert series.next_after(z("9000-06-01T12:00:30")) == z("9000-06-01T12:01:00")
    assert series.end is None  # the count would end after year 9999


# -- interval with schedules ---------------------------------------------------------


@pytest.mark.parametrize(
    ("recurrence", "expected"),
    [
        # period 0 is the week of Mon 01-08; Mon 01-08 is before startTime; next active week starts 01-22.
        (
            Recurrence(F.WEEK, 2, schedule=Schedule(minutes=(0,), hours=(9,), week_days=(MON, FRI))),
            ["2024-01-12T09:00", "2024-01-22T09:00", "2024-01-26T09:00", "2024-02-05T09:00"],
        ),
        # 01-10 06:00 is before startTime; active days every 3 from 01-10.
        (
            Recurrence(F.DAY, 3, schedule=Schedule(minutes=(0,), hours=(6,))),
            ["2024-01-13T06:00", "2024-01-16T06:00", "2024-01-19T06:00"],
        ),
        (Recurrence(F.MONTH, 3, schedule=Schedule(month_days=(1,))), ["2024-04-01T12:25", "2024-07-01T12:25"]),
        # hour periods 12, 17, 22, 03, 08 from startTime's hour 12; 12:10 is before startTime.
        (
            Recurrence(F.HOUR, 5, schedule=Schedule(minutes=(10,))),
            ["2024-01-10T17:10", "2024-01-10T22:10", "2024-01-11T03:10", "2024-01-11T08:10"],
        ),
        # minutes since 12:25 that are multiples of 7 inside hour 9: 1239 -> 09:04, then every 7.
        (
            Recurrence(F.MINUTE, 7, schedule=Schedule(hours=(9,))),
            ["2024-01-11T09:04", "2024-01-11T09:11", "2024-01-11T09:18"],
        ),
        (
            Recurrence(F.MONTH, schedule=Schedule(month_days=(13,), monthly_occurrences=(MonthlyOccurrence(FRI),))),
            ["2024-09-13T12:25", "2024-12-13T12:25", "2025-06-13T12:25"],  # Friday the 13th: both must hold
        ),
        (Recurrence(F.MONTH), ["2024-02-10T12:25", "2024-03-10T12:25"]),
    ],
    ids=["week-2", "day-3", "month-3", "hour-5", "minute-7-filtered", "friday-13th", "month-plain"],
)
def test_intervals_with_schedules(recurrence: Recurrence, expected: list[str]) -> None:
    start = z("2024-01-10T12:25:00")
    assert take(OccurrenceSeries(start, recurrence), start, len(expected)) == [z(e + ":00") for e in expected]


def test_month_on_31st_skips_short_months() -> None:
    start = z("2024-01-31T08:00:00")
    expected = ["2024-03-31", "2024-05-31", "2024-07-31", "2024-08-31"]
    assert take(OccurrenceSeries(start, Recurrence(F.MONTH)), start, 4) == [z(e + "T08:00:00") for e in expected]


# -- min_gap -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("recurrence", "gap"),
    [
        (Recurrence(F.DAY, schedule=Schedule(minutes=(0, 15, 30, 45))), timedelta(minutes=15)),
        (Recurrence(F.WEEK, schedule=Schedule(minutes=(0,), hours=(17,), week_days=(MON, TUE))), timedelta(days=1)),
        (Recurrence(F.WEEK, schedule=Schedule(week_days=(MON,))), timedelta(days=7)),
        (Recurrence(F.WEEK, 2, schedule=Schedule(week_days=(MON,))), timedelta(days=14)),
        (Recurrence(F.HOUR, schedule=Schedule(minutes=(0, 30))), timedelta(minutes=30)),
        (Recurrence(F.MINUTE, 5), timedelta(minutes=5)),
        (Recurrence(F.HOUR, 3), timedelta(hours=3)),
        (Recurrence(F.MINUTE, schedule=Schedule(hours=(9,))), timedelta(minutes=1)),
        (Recurrence(F.DAY, 2), timedelta(days=2)),
        (Recurrence(F.DAY, schedule=Schedule(minutes=(30,), hours=(0, 23))), timedelta(hours=1)),  # 23:30 -> 00:30
        (Recurrence(F.DAY, schedule=Schedule(minutes=(15,), hours=(5, 17))), timedelta(hours=12)),
        (Recurrence(F.MONTH, schedule=Schedule(month_days=(1, -1))), timedelta(days=1)),  # 31st -> 1st
        (Recurrence(F.MONTH, schedule=Schedule(month_days=(-1,))), timedelta(days=28)),  # Jan 31 -> Feb 28
        (Recurrence(F.MONTH, schedule=Schedule(month_days=(31,))), timedelta(days=31)),  # Jul 31 -> Aug 31
        # 5th Fridays: 5 weeks later is past the next month's end, so at least 9 weeks (Mar 29 -> May 31).
        (Recurrence(F.MONTH, schedule=Schedule(monthly_occurrences=(MonthlyOccurrence(FRI, 5),))), timedelta(weeks=9)),
        (Recurrence(F.YEAR), timedelta(days=365)),
    ],
)
def test_min_gap(recurrence: Recurrence, gap: timedelta) -> None:
    assert OccurrenceSeries(z("2024-01-10T12:25:00"), recurrence).min_gap() == gap


def test_rare_monthly_schedule_found_decades_apart() -> None:
    # Every 12th month from February 2024, on the 5th Thursday: only a leap February starting on a
    # Thursday has one. Feb 1 moves 5 weekdays every 4 years, so the next is 28 years later.
    rec = Recurrence(F.MONTH, 12, schedule=Schedule(monthly_occurrences=(MonthlyOccurrence(WeekDay.THURSDAY, 5),)))
    series = OccurrenceSeries(z("2024-02-01T12:00:00"), rec)
    assert series.first == z("2024-02-29T12:00:00")
    assert series.next_after(z("2024-02-29T12:00:00")) == z("2052-02-29T12:00:00")
    assert series.last_at_or_before(z("2051-12-31T00:00:00")) == z("2024-02-29T12:00:00")
    assert series.index_of(z("2052-02-29T12:00:00")) == 2
    assert series.min_gap() == timedelta(days=28 * 365 + 7)
