"""The recurrence engine at the ends of the calendar: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z.

Contract: every query answers (no OverflowError) for any startTime, recurrence and time zone, also where the
zone's wall clock reads year 0 or year 10000; occurrences are never outside the calendar, and the series has
its occurrences up to its last one before 9999-12-31T23:59:59Z (then None: no further occurrence).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.recurrence import Frequency, MonthlyOccurrence, OccurrenceSeries, Recurrence, Schedule, WeekDay
from shared.recurrence.calendar_math import CYCLE_DAYS, civil

FIRST = datetime.min.replace(tzinfo=UTC)
LAST = datetime.max.replace(tzinfo=UTC, microsecond=0)
UNIX_ORDINAL = datetime(1970, 1, 1).toordinal()
# The widest offsets (UTC+14, UTC-12), a DST zone of each hemisphere, half-hour and 45-minute offsets.
ZONES = (
    None,
    "Pacific/Kiritimati",
    "Etc/GMT-14",
    "Etc/GMT+12",
    "Pacific/Apia",
    "America/New_York",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
    "America/St_Johns",
)


def z(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def daily_at_23_59(zone: str | None, **more: object) -> Recurrence:
    return Recurrence(Frequency.DAY, schedule=Schedule(hours=(23,), minutes=(59,)), time_zone=zone, **more)  # type: ignore[arg-type]


def test_a_daily_job_in_kiritimati_runs_until_its_last_wall_time_of_9999_then_has_none() -> None:
    series = OccurrenceSeries(z("2024-01-01T00:00:00Z"), daily_at_23_59("Pacific/Kiritimati"))
    # 23:59 at UTC+14 is 09:59Z; the wall clock reads 10000-01-01 from 9999-12-31T10:00Z on.
    assert series.first_at_or_after(z("9999-12-31T00:00:00Z")) == z("9999-12-31T09:59:00Z")
    assert series.next_after(z("9999-12-31T09:59:00Z")) is None
    assert series.first_at_or_after(LAST) is None
    assert series.next_after(LAST) is None
    assert series.first_at_or_after(datetime.max.replace(tzinfo=UTC)) is None
    assert series.last_at_or_before(datetime.max.replace(tzinfo=UTC)) == z("9999-12-31T09:59:00Z")
    assert series.dst_shift(z("9999-12-31T09:59:00Z")) is None
    assert series.index_of(z("9999-12-31T09:59:00Z")) > 2_900_000


def test_a_utc_job_has_its_occurrences_up_to_the_last_second_of_9999() -> None:
    daily = OccurrenceSeries(z("2024-01-01T00:00:00Z"), daily_at_23_59(None))
    assert daily.first_at_or_after(z("9999-12-30T00:00:00Z")) == z("9999-12-30T23:59:00Z")
    assert daily.next_after(z("9999-12-30T23:59:00Z")) == z("9999-12-31T23:59:00Z")
    assert daily.next_after(z("9999-12-31T23:59:00Z")) is None
    every_second_minute = OccurrenceSeries(z("2024-01-01T00:00:59Z"), Recurrence(Frequency.MINUTE))
    assert every_second_minute.last_at_or_before(LAST) == LAST
    assert every_second_minute.next_after(LAST - timedelta(minutes=1)) == LAST
    assert every_second_minute.next_after(LAST) is None


def test_a_zone_behind_utc_ends_with_the_wall_time_of_its_own_30_december() -> None:
    series = OccurrenceSeries(z("2024-01-01T00:00:00Z"), daily_at_23_59("Etc/GMT+12"))  # UTC-12
    assert series.first_at_or_after(z("9999-12-31T00:00:00Z")) == z("9999-12-31T11:59:00Z")
    assert series.next_after(z("9999-12-31T11:59:00Z")) is None  # 9999-12-31T23:59 there is 10000-01-01Z


def test_a_count_beyond_year_9999_is_an_endless_series_and_an_end_time_at_the_last_tick_ends_it() -> None:
    counted = OccurrenceSeries(z("2024-01-01T00:00:00Z"), daily_at_23_59("Pacific/Kiritimati", count=2_147_483_647))
    assert not counted.is_finite and counted.end is None
    assert counted.next_after(z("9999-12-31T09:59:00Z")) is None
    ending = OccurrenceSeries(
        z("2024-01-01T00:00:00Z"),
        daily_at_23_59("Pacific/Kiritimati", end_time=z("9999-12-31T23:59:59.999999Z")),
    )
    assert ending.end == z("9999-12-31T09:59:00Z") and ending.ends_by == "endTime"


def test_a_start_at_the_first_second_of_year_1_in_a_zone_whose_clock_reads_year_0() -> None:
    series = OccurrenceSeries(FIRST, daily_at_23_59("Etc/GMT+12"))  # 0001-01-01T00:00Z is 0000-12-31T12:00 there
    first = series.first
    assert first == z("0001-01-01T11:59:00Z")  # 23:59 of the zone's 0000-12-31
    assert series.index_of(first) == 1
    assert series.last_at_or_before(first - timedelta(seconds=1)) is None
    assert series.next_after(first) == z("0001-01-02T11:59:00Z")
    east = OccurrenceSeries(FIRST, Recurrence(Frequency.MONTH, time_zone="Pacific/Kiritimati"))
    assert east.first == FIRST and east.next_after(FIRST) == z("0001-02-01T00:00:00Z")


RECURRENCES = st.sampled_from(
    [
        Recurrence(Frequency.MINUTE, interval=7),
        Recurrence(Frequency.MINUTE, schedule=Schedule(minutes=(0, 59))),
        Recurrence(Frequency.HOUR, interval=5),
        Recurrence(Frequency.HOUR, schedule=Schedule(hours=(0, 23), minutes=(30,))),
        Recurrence(Frequency.DAY),
        Recurrence(Frequency.DAY, interval=3, schedule=Schedule(hours=(0, 12, 23), minutes=(0, 59))),
        Recurrence(Frequency.WEEK, schedule=Schedule(week_days=(WeekDay.FRIDAY, WeekDay.SUNDAY), hours=(23,))),
        Recurrence(Frequency.MONTH, schedule=Schedule(month_days=(-1, 1), hours=(0, 23))),
        Recurrence(Frequency.MONTH, schedule=Schedule(monthly_occurrences=(MonthlyOccurrence(WeekDay.FRIDAY, -1),))),
        Recurrence(Frequency.YEAR),
    ]
)
NEAR_AN_END = st.one_of(
    st.integers(0, 3 * 86_400).map(lambda s: FIRST + timedelta(seconds=s)),
    st.integers(0, 3 * 86_400).map(lambda s: LAST - timedelta(seconds=s)),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    zone=st.sampled_from(ZONES),
    recurrence=RECURRENCES,
    start=st.sampled_from([FIRST, z("0001-01-01T13:45:17Z"), z("2024-06-30T23:59:00Z")]),
    asked=NEAR_AN_END,
)
def test_every_query_near_either_end_answers_within_the_calendar(
    zone: str | None, recurrence: Recurrence, start: datetime, asked: datetime
) -> None:
    zoned = Recurrence(recurrence.frequency, recurrence.interval, schedule=recurrence.schedule, time_zone=zone)
    series = OccurrenceSeries(start, zoned)
    following = series.next_after(asked)
    at_or_after = series.first_at_or_after(asked)
    before = series.last_at_or_before(asked)
    for found in (following, at_or_after, before):
        assert found is None or start.replace(microsecond=0) <= found <= LAST
    assert following is None or following > asked
    assert before is None or before <= asked
    if following is not None:
        assert series.last_at_or_before(following) == following
        assert series.index_of(following) >= 1
        series.dst_shift(following)
    if before is not None:
        assert series.next_after(before) in (following, at_or_after)
        series.dst_shift(before)
    last = series.last_at_or_before(LAST)
    assert last is not None and series.next_after(last) is None


@pytest.mark.parametrize("zone", ZONES)
def test_the_last_occurrence_of_an_endless_series_is_the_last_before_the_calendar_ends(zone: str | None) -> None:
    series = OccurrenceSeries(z("2024-01-01T00:00:00Z"), Recurrence(Frequency.HOUR, time_zone=zone))
    last = series.last_at_or_before(LAST)
    assert last == z("9999-12-31T23:00:00Z") and series.next_after(last) is None and series.end is None


def test_calendar_arithmetic_goes_on_before_year_1_and_after_year_9999() -> None:
    first, last = FIRST.date().toordinal() - UNIX_ORDINAL, LAST.date().toordinal() - UNIX_ORDINAL
    assert (civil(first), civil(first - 1)) == ((1, 1, 1), (0, 12, 31))
    assert (civil(last), civil(last + 1)) == ((9999, 12, 31), (10000, 1, 1))
    assert civil(last + 60) == (10000, 2, 29)  # 10000 is a leap year, as 2000 was
    assert civil(last + 100 * CYCLE_DAYS) == (49999, 12, 31) and civil(first - 100 * CYCLE_DAYS) == (-39999, 1, 1)
