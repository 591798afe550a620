"""Time-zone extension across DST changes, with hand-derived instants.

Transitions used (tz database, 2024):
* America/New_York: 03-10 07:00Z 02:00 EST -> 03:00 EDT (gap 02:00-03:00);
  11-03 06:00Z 02:00 EDT -> 01:00 EST (01:00-02:00 repeated).
* Europe/London: 03-31 01:00Z 01:00 GMT -> 02:00 BST; 10-27 01:00Z 02:00 BST -> 01:00 GMT.
* Australia/Lord_Howe (30-minute shift): 04-06 15:00Z 02:00 +11 -> 01:30 +10:30
  (01:30-02:00 repeated); 10-05 15:30Z 02:00 +10:30 -> 02:30 +11 (gap 02:00-02:30).

Rules: schedules and Day periods are wall-clock; a skipped wall time runs at
the first instant after the gap; a repeated one runs once, at its first
instance; Minute/Hour without a schedule step in elapsed time.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from shared.recurrence import Frequency, OccurrenceSeries, Recurrence, Schedule


def z(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def run(series: OccurrenceSeries, n: int) -> list[str]:
    out: list[str] = []
    t = series.first_at_or_after(series.start)
    while t is not None and len(out) < n:
        out.append(t.strftime("%m-%dT%H:%MZ"))
        t = series.next_after(t)
    return out


NY, LONDON, LORD_HOWE = "America/New_York", "Europe/London", "Australia/Lord_Howe"

CASES = [
    # (id, zone, frequency, interval, schedule, start, expected)
    ("ny-day-into-gap", NY, "Day", 1, None, "2024-03-08T07:30Z",  # 02:30 EST daily
     ["03-08T07:30Z", "03-09T07:30Z", "03-10T07:00Z", "03-11T06:30Z"]),
    ("ny-hour-elapsed-spring", NY, "Hour", 1, None, "2024-03-10T05:30Z",
     ["03-10T05:30Z", "03-10T06:30Z", "03-10T07:30Z", "03-10T08:30Z"]),
    ("ny-hour-schedule-gap-merges", NY, "Hour", 1, Schedule(minutes=(0, 30)), "2024-03-10T06:00Z",
     ["03-10T06:00Z", "03-10T06:30Z", "03-10T07:00Z", "03-10T07:30Z", "03-10T08:00Z"]),
    ("ny-minute-elapsed-spring", NY, "Minute", 15, None, "2024-03-10T06:30Z",
     ["03-10T06:30Z", "03-10T06:45Z", "03-10T07:00Z", "03-10T07:15Z"]),
    ("ny-minute-schedule-whole-hour-skipped", NY, "Minute", 1, Schedule(hours=(2,)), "2024-03-09T12:00Z",
     ["03-10T07:00Z", "03-11T06:00Z", "03-11T06:01Z", "03-11T06:02Z"]),
    ("ny-day-repeated-hour", NY, "Day", 1, None, "2024-11-01T05:30Z",  # 01:30 EDT daily
     ["11-01T05:30Z", "11-02T05:30Z", "11-03T05:30Z", "11-04T06:30Z"]),
    ("ny-hour-schedule-fall", NY, "Hour", 1, Schedule(minutes=(0, 30)), "2024-11-03T04:00Z",
     ["11-03T04:00Z", "11-03T04:30Z", "11-03T05:00Z", "11-03T05:30Z", "11-03T07:00Z", "11-03T07:30Z"]),
    ("ny-minute-elapsed-fall", NY, "Minute", 30, None, "2024-11-03T04:30Z",
     ["11-03T04:30Z", "11-03T05:00Z", "11-03T05:30Z", "11-03T06:00Z", "11-03T06:30Z"]),
    ("ny-hour-elapsed-fall", NY, "Hour", 1, None, "2024-11-03T04:30Z",
     ["11-03T04:30Z", "11-03T05:30Z", "11-03T06:30Z", "11-03T07:30Z"]),
    ("london-day-into-gap", LONDON, "Day", 1, None, "2024-03-29T01:30Z",
     ["03-29T01:30Z", "03-30T01:30Z", "03-31T01:00Z", "04-01T00:30Z"]),
    ("london-day-repeated-hour", LONDON, "Day", 1, None, "2024-10-26T00:30Z",
     ["10-26T00:30Z", "10-27T00:30Z", "10-28T01:30Z"]),
    ("london-minute-schedule-spring", LONDON, "Minute", 1, Schedule(minutes=(0, 20, 40), hours=(1,)),
     "2024-03-30T12:00Z", ["03-31T01:00Z", "04-01T00:00Z", "04-01T00:20Z", "04-01T00:40Z"]),
    ("london-minute-schedule-fall", LONDON, "Minute", 1, Schedule(minutes=(0, 20, 40), hours=(1,)),
     "2024-10-26T12:00Z", ["10-27T00:00Z", "10-27T00:20Z", "10-27T00:40Z", "10-28T01:00Z"]),
    ("london-hour-schedule-fall", LONDON, "Hour", 1, Schedule(minutes=(30,)), "2024-10-26T23:00Z",
     ["10-26T23:30Z", "10-27T00:30Z", "10-27T02:30Z", "10-27T03:30Z"]),
    ("lordhowe-day-into-gap", LORD_HOWE, "Day", 1, None, "2024-10-03T15:45Z",  # 02:15 daily
     ["10-03T15:45Z", "10-04T15:45Z", "10-05T15:30Z", "10-06T15:15Z"]),
    ("lordhowe-day-repeated", LORD_HOWE, "Day", 1, None, "2024-04-04T14:45Z",  # 01:45 daily
     ["04-04T14:45Z", "04-05T14:45Z", "04-06T14:45Z", "04-07T15:15Z"]),
    ("lordhowe-hour-schedule-gap", LORD_HOWE, "Hour", 1, Schedule(minutes=(0, 15, 30, 45)), "2024-10-05T15:00Z",
     ["10-05T15:00Z", "10-05T15:15Z", "10-05T15:30Z", "10-05T15:45Z", "10-05T16:00Z"]),
    ("lordhowe-minute-elapsed-back", LORD_HOWE, "Minute", 20, None, "2024-04-06T14:40Z",
     ["04-06T14:40Z", "04-06T15:00Z", "04-06T15:20Z"]),
    ("lordhowe-hour-schedule-back", LORD_HOWE, "Hour", 1, Schedule(minutes=(40,)), "2024-04-06T13:00Z",
     ["04-06T13:40Z", "04-06T14:40Z", "04-06T16:10Z", "04-06T17:10Z"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("zone", "frequency", "interval", "schedule", "start", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_dst_transitions(
    zone: str, frequency: str, interval: int, schedule: Schedule | None, start: str, expected: list[str]
) -> None:
    rec = Recurrence(Frequency(frequency), interval, schedule=schedule, time_zone=zone)
    assert run(OccurrenceSeries(z(start), rec), len(expected)) == expected


def test_count_treats_merged_gap_slots_as_one_occurrence() -> None:
    # 01:30, 01:45, [02:00, 02:15, 02:30 all at 15:30Z], 02:45, 03:00 wall time.
    rec = Recurrence(Frequency.HOUR, schedule=Schedule(minutes=(0, 15, 30, 45)), time_zone=LORD_HOWE, count=5)
    series = OccurrenceSeries(z("2024-10-05T15:00Z"), rec)
    assert series.end == z("2024-10-05T16:00Z")
    assert series.index_of(z("2024-10-05T15:30Z")) == 3
    assert series.index_of(z("2024-10-05T15:45Z")) == 4


def test_index_after_many_dst_changes_counts_each_merged_cluster_once() -> None:
    # Every 30 minutes in New York: each spring-forward day merges 02:00, 02:30
    # and 03:00 into one occurrence (48 - 2 per spring day), each fall-back day
    # runs 01:00 and 01:30 once (48 wall slots, 48 occurrences, 25 hours).
    rec = Recurrence(Frequency.DAY, schedule=Schedule(minutes=(0, 30)), time_zone=NY)
    series = OccurrenceSeries(z("2020-01-01T05:00Z"), rec)  # 00:00 EST
    end = z("2030-01-01T05:00Z")  # 00:00 EST, ten years later
    days = (end - z("2020-01-01T05:00Z")).days
    assert series.index_of(end) == days * 48 - 2 * 10 + 1


@pytest.mark.parametrize(
    ("query", "last", "following"),
    [
        # 01:50 +10:30 lies in the second pass of 01:30-02:00: 01:40 already ran at 14:40Z.
        ("2024-04-06T15:20Z", "2024-04-06T14:40Z", "2024-04-06T16:10Z"),
        ("2024-04-06T15:05Z", "2024-04-06T14:40Z", "2024-04-06T16:10Z"),
        ("2024-04-06T14:40Z", "2024-04-06T14:40Z", "2024-04-06T16:10Z"),
        ("2024-04-06T14:39Z", "2024-04-06T13:40Z", "2024-04-06T14:40Z"),
    ],
)
def test_queries_inside_repeated_hour(query: str, last: str, following: str) -> None:
    rec = Recurrence(Frequency.HOUR, schedule=Schedule(minutes=(40,)), time_zone=LORD_HOWE)
    series = OccurrenceSeries(z("2024-04-06T13:00Z"), rec)
    assert series.last_at_or_before(z(query)) == z(last)
    assert series.next_after(z(query)) == z(following)


def test_ny_fall_back_second_pass_query() -> None:
    rec = Recurrence(Frequency.HOUR, schedule=Schedule(minutes=(0, 30)), time_zone=NY)
    series = OccurrenceSeries(z("2024-11-03T04:00Z"), rec)
    assert series.last_at_or_before(z("2024-11-03T06:45Z")) == z("2024-11-03T05:30Z")  # 01:45 EST
    assert series.next_after(z("2024-11-03T06:15Z")) == z("2024-11-03T07:00Z")  # 01:15 EST -> 02:00 EST


def test_start_defaults_use_wall_clock_of_the_zone() -> None:
    # 2024-01-10T23:30Z is 2024-01-11 10:30 in Sydney (+11): a Thursday, day 11.
    start = z("2024-01-10T23:30Z")
    weekly = OccurrenceSeries(start, Recurrence(Frequency.WEEK, time_zone="Australia/Sydney"))
    assert weekly.next_after(start) == z("2024-01-17T23:30Z")
    hourly = OccurrenceSeries(start, Recurrence(Frequency.DAY, schedule=Schedule(hours=(9,)), time_zone="Asia/Tokyo"))
    assert hourly.next_after(start) == z("2024-01-11T00:30Z")  # 09:30 JST, minute of startTime


def test_min_gap_is_nominal_in_zones() -> None:
    rec = Recurrence(Frequency.HOUR, schedule=Schedule(minutes=(40,)), time_zone=LORD_HOWE)
    assert OccurrenceSeries(z("2024-04-06T13:00Z"), rec).min_gap() == timedelta(hours=1)
