"""Cron expressions: what is accepted and refused (with messages), and hand-checked instants.

Expected instants are derived by hand from a calendar: 2024-03-31 (Sunday) and 2024-10-27 are the
Europe/Berlin DST changes (02:00 CET -> 03:00 CEST at 01:00Z; 03:00 CEST -> 02:00 CET at 01:00Z);
2024-07-01 is a Monday, 2024-01-07 a Sunday. The differential property test against a brute-force
walker is in test_cron_against_brute_force.py.
"""

from __future__ import annotations

import tracemalloc
from datetime import datetime, timedelta

import pytest

from shared.recurrence import (
    CronExpression,
    Frequency,
    OccurrenceSeries,
    Recurrence,
    RecurrenceError,
    Schedule,
    parse_cron,
    validate_recurrence,
)
from shared.recurrence.cron import CronPattern

BERLIN = "Europe/Berlin"
ALL_MINUTES, ALL_HOURS = tuple(range(60)), tuple(range(24))
ALL_DAYS, ALL_MONTHS, ALL_WEEKDAYS = tuple(range(1, 32)), tuple(range(1, 13)), tuple(range(7))


def z(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def cron(expression: str, zone: str | None = None, **bounds: object) -> Recurrence:
    # frequency is ignored beside cron; DAY is only a placeholder for the required field
    return Recurrence(Frequency.DAY, cron=expression, time_zone=zone, **bounds)  # type: ignore[arg-type]


def run(series: OccurrenceSeries, n: int, after: datetime | None = None) -> list[str]:
    out: list[str] = []
    t = series.first if after is None else series.next_after(after)
    while t is not None and len(out) < n:
        out.append(t.strftime("%Y-%m-%dT%H:%MZ"))
        t = series.next_after(t)
    return out


# -- parsing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("* * * * *", CronExpression(ALL_MINUTES, ALL_HOURS, ALL_DAYS, ALL_MONTHS, ALL_WEEKDAYS, False)),
        (
            "0,30 9-17/2 1 JAN-mar mon-FRI",
            CronExpression((0, 30), (9, 11, 13, 15, 17), (1,), (1, 2, 3), (1, 2, 3, 4, 5), True),
        ),
        ("5/15 */6 * * *", CronExpression((5, 20, 35, 50), (0, 6, 12, 18), ALL_DAYS, ALL_MONTHS, ALL_WEEKDAYS, False)),
        ("0 0 * * 7", CronExpression((0,), (0,), ALL_DAYS, ALL_MONTHS, (0,), False)),
        ("0 0 * * 5-7", CronExpression((0,), (0,), ALL_DAYS, ALL_MONTHS, (0, 5, 6), False)),
        ("0 0 * * 1/2", CronExpression((0,), (0,), ALL_DAYS, ALL_MONTHS, (0, 1, 3, 5), False)),  # 1,3,5,7
        ("0 0 * * */2", CronExpression((0,), (0,), ALL_DAYS, ALL_MONTHS, (0, 2, 4, 6), False)),
        ("0 0 */10 * sun,Sat", CronExpression((0,), (0,), (1, 11, 21, 31), ALL_MONTHS, (0, 6), False)),
        ("0 0 1-31 * 1", CronExpression((0,), (0,), ALL_DAYS, ALL_MONTHS, (1,), True)),  # restricted: no '*'
        ("59 23 31 dec *", CronExpression((59,), (23,), (31,), (12,), ALL_WEEKDAYS, False)),
        ("00000000059 23 31 dec *", CronExpression((59,), (23,), (31,), (12,), ALL_WEEKDAYS, False)),
        ("  07\t08   1,15 */4 *\n", CronExpression((7,), (8,), (1, 15), (1, 5, 9), ALL_WEEKDAYS, False)),
        ("0-59/59 0-23/23 31/31 12/12 7/7", CronExpression((0, 59), (0, 23), (31,), (12,), (0,), True)),
    ],
)
def test_accepted_expressions_parse_to_their_values(expression: str, expected: CronExpression) -> None:
    assert parse_cron(expression) == expected


@pytest.mark.parametrize(
    ("macro", "same_as"),
    [
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@monthly", "0 0 1 * *"),
        ("@weekly", "0 0 * * 0"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@hourly", "0 * * * *"),
        (" @Daily ", "0 0 * * *"),
    ],
)
def test_macros_stand_for_their_expressions(macro: str, same_as: str) -> None:
    assert parse_cron(macro) == parse_cron(same_as)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("", "a cron expression has five fields (minute hour day-of-month month day-of-week), not 0"),
        ("0 0 * *", "a cron expression has five fields (minute hour day-of-month month day-of-week), not 4"),
        ("0 0 0 * * *", "a cron expression has five fields (minute hour day-of-month month day-of-week), not 6"),
        ("60 * * * *", "the minute field: 60 is out of range 0-59"),
        ("* 24 * * *", "the hour field: 24 is out of range 0-23"),
        ("0 0 32 * *", "the day-of-month field: 32 is out of range 1-31"),
        ("0 0 0 * *", "the day-of-month field: 0 is out of range 1-31"),
        ("0 0 * 13 *", "the month field: 13 is out of range 1-12"),
        ("0 0 * * 8", "the day-of-week field: 8 is out of range 0-7"),
        ("0 0 * * 99999999", "the day-of-week field: 99999999 is out of range 0-7"),
        ("*/0 * * * *", "the minute field: step 0 in '*/0' is out of range 1-59"),
        ("*/60 * * * *", "the minute field: step 60 in '*/60' is out of range 1-59"),
        ("0 0 1-5/x * *", "the day-of-month field: step 'x' in '1-5/x' is not a number"),
        ("0 0 1/2/3 * *", "the day-of-month field: step '2/3' in '1/2/3' is not a number"),
        ("5-1 * * * *", "the minute field: the range '5-1' is reversed"),
        ("0 0 * * FRI-MON", "the day-of-week field: the range 'FRI-MON' is reversed"),
        ("0 0 * DEC-JAN *", "the month field: the range 'DEC-JAN' is reversed"),
        ("0 0 L * *", "the day-of-month field: 'L': the Quartz extensions L, W, # and ? are not supported"),
        ("0 0 15W * *", "the day-of-month field: '15W': the Quartz extensions L, W, # and ? are not supported"),
        ("0 0 ? * 1", "the day-of-month field: '?': the Quartz extensions L, W, # and ? are not supported"),
        ("0 0 * * 5L", "the day-of-week field: '5L': the Quartz extensions L, W, # and ? are not supported"),
        ("0 0 * * 1#2", "the day-of-week field: '1#2': the Quartz extensions L, W, # and ? are not supported"),
        ("x * * * *", "the minute field: 'x' is not a number"),
        ("JAN * * * *", "the minute field: 'JAN' is not a number"),
        ("0 0 * JUX *", "the month field: 'JUX' is not a number or a month name"),
        ("0 0 * * MONDAY", "the day-of-week field: 'MONDAY' is not a number or a day-of-week name"),
        ("-1 * * * *", "the minute field: '' is not a number"),
        ("+1 * * * *", "the minute field: '+1' is not a number"),
        ("\u0661 * * * *", "the minute field: '\u0661' is not a number"),  # an Arabic-Indic digit one
        ("1,,2 * * * *", "the minute field: '1,,2' has an empty list item"),
        ("*-5 * * * *", "the minute field: '*' is not a number"),
        ("@reboot", "unknown macro '@reboot'; use one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, "
         "@hourly"),
        ("@daily 5", "a cron expression has five fields (minute hour day-of-month month day-of-week), not 2"),
        ("0 0 30 2 *", "the expression never fires: no date matches its day-of-month, month and day-of-week"),
        ("0 0 31 4,6,9,11 *", "the expression never fires: no date matches its day-of-month, month and day-of-week"),
        ("0 0 30,31 feb */2", "the expression never fires: no date matches its day-of-month, month and day-of-week"),
    ],
)  # fmt: skip
def test_refused_expressions_name_the_field_and_the_fault(expression: str, message: str) -> None:
    with pytest.raises(RecurrenceError) as raised:
        parse_cron(expression)
    assert (raised.value.path, raised.value.message) == ("cron", message)
    assert str(raised.value) == f"cron: {message}"
    with pytest.raises(RecurrenceError, match="^cron: "):
        validate_recurrence(cron(expression))


def test_a_cron_that_is_not_a_string_or_is_huge_is_refused() -> None:
    with pytest.raises(RecurrenceError, match="^cron: a cron expression must be a string$"):
        parse_cron(5)
    with pytest.raises(RecurrenceError, match="at most 1000 characters"):
        parse_cron("0," * 600 + "0 * * * *")


def test_frequency_interval_and_schedule_are_ignored_beside_cron() -> None:
    recurrence = Recurrence(Frequency.MINUTE, interval=5000, schedule=Schedule(hours=(99,)), cron="0 9 * * *")
    validate_recurrence(recurrence)  # neither the interval nor the schedule is checked
    series = OccurrenceSeries(z("2024-05-01T10:00Z"), recurrence)
    assert run(series, 2) == ["2024-05-02T09:00Z", "2024-05-03T09:00Z"]


def test_a_compiled_every_minute_expression_stays_small() -> None:
    expression = parse_cron("* * * * *")
    tracemalloc.start()
    try:
        pattern = CronPattern(expression)
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert pattern.min_gap() == 60
    assert kept < 400_000  # a day x minute table over 400 years would be gigabytes


# -- hand-checked instants -------------------------------------------------------------------


def test_weekday_mornings_in_berlin_keep_their_wall_time_across_the_spring_change() -> None:
    series = OccurrenceSeries(z("2024-03-27T12:00Z"), cron("30 9 * * 1-5", BERLIN))
    assert run(series, 6) == [
        "2024-03-28T08:30Z",  # Thursday, CET
        "2024-03-29T08:30Z",  # Friday; the weekend is skipped
        "2024-04-01T07:30Z",  # Monday, CEST
        "2024-04-02T07:30Z",
        "2024-04-03T07:30Z",
        "2024-04-04T07:30Z",
    ]


def test_the_29th_of_february_runs_in_leap_years_only() -> None:
    series = OccurrenceSeries(z("2023-06-01T00:00Z"), cron("0 0 29 2 *"))
    assert run(series, 3) == ["2024-02-29T00:00Z", "2028-02-29T00:00Z", "2032-02-29T00:00Z"]
    assert series.next_after(z("2097-01-01T00:00Z")) == z("2104-02-29T00:00Z")  # 2100 is no leap year
    assert series.next_after(z("2396-03-01T00:00Z")) == z("2400-02-29T00:00Z")  # 2400 is one
    assert series.last_at_or_before(z("2104-02-28T23:59Z")) == z("2096-02-29T00:00Z")
    assert series.index_of(z("2400-02-29T00:00Z")) == 19 + 3 * 24 + 1  # 2024-2096, three centuries, 2400
    assert series.min_gap() == timedelta(days=4 * 365 + 1)


def test_both_day_fields_restricted_run_on_either_vixies_rule() -> None:
    start = z("2024-06-28T00:00Z")
    either = OccurrenceSeries(start, cron("0 12 1 * MON"))
    assert run(either, 7) == [
        "2024-07-01T12:00Z",  # the 1st and a Monday: once
        "2024-07-08T12:00Z",
        "2024-07-15T12:00Z",
        "2024-07-22T12:00Z",
        "2024-07-29T12:00Z",
        "2024-08-01T12:00Z",  # a Thursday, the 1st
        "2024-08-05T12:00Z",
    ]
    # A '*' in either day field makes the other one alone decide (both must match).
    assert run(OccurrenceSeries(start, cron("0 12 * * MON")), 2) == ["2024-07-01T12:00Z", "2024-07-08T12:00Z"]
    assert run(OccurrenceSeries(start, cron("0 12 1 * *")), 2) == ["2024-07-01T12:00Z", "2024-08-01T12:00Z"]
    # '*/2' starts with '*': the odd days that are Mondays (both), not odd days or Mondays.
    assert run(OccurrenceSeries(start, cron("0 12 */2 * 1")), 3) == [
        "2024-07-01T12:00Z",
        "2024-07-15T12:00Z",
        "2024-07-29T12:00Z",
    ]


@pytest.mark.parametrize(
    ("macro", "start", "expected"),
    [
        ("@hourly", "2024-01-01T00:10Z", ["2024-01-01T01:00Z", "2024-01-01T02:00Z"]),
        ("@daily", "2024-02-28T00:00:01Z", ["2024-02-29T00:00Z", "2024-03-01T00:00Z"]),
        ("@weekly", "2024-01-01T00:00Z", ["2024-01-07T00:00Z", "2024-01-14T00:00Z"]),
        ("@monthly", "2024-01-31T00:00Z", ["2024-02-01T00:00Z", "2024-03-01T00:00Z"]),
        ("@yearly", "2024-05-05T00:00Z", ["2025-01-01T00:00Z", "2026-01-01T00:00Z"]),
    ],
)
def test_macros_run_at_the_start_of_their_period(macro: str, start: str, expected: list[str]) -> None:
    assert run(OccurrenceSeries(z(start), cron(macro)), 2) == expected


def test_steps_lists_and_ranges_combine() -> None:
    series = OccurrenceSeries(z("2024-01-01T00:00Z"), cron("*/15 */6 * * *"))
    assert run(series, 5) == [
        "2024-01-01T00:00Z",
        "2024-01-01T00:15Z",
        "2024-01-01T00:30Z",
        "2024-01-01T00:45Z",
        "2024-01-01T06:00Z",
    ]
    series = OccurrenceSeries(z("2024-01-01T23:30Z"), cron("5/20 22-23,1 * * *"))
    assert run(series, 5) == [
        "2024-01-01T23:45Z",
        "2024-01-02T01:05Z",
        "2024-01-02T01:25Z",
        "2024-01-02T01:45Z",
        "2024-01-02T22:05Z",
    ]


def test_start_count_and_end_time_still_bound_a_cron_series() -> None:
    start = z("2024-05-01T10:30:00Z")
    counted = OccurrenceSeries(start, cron("0 * * * *", count=3))
    assert run(counted, 10) == ["2024-05-01T11:00Z", "2024-05-01T12:00Z", "2024-05-01T13:00Z"]
    assert counted.end == z("2024-05-01T13:00Z") and counted.ends_by == "count"
    ended = OccurrenceSeries(start, cron("0 * * * *", end_time=z("2024-05-01T12:59:59Z")))
    assert run(ended, 10) == ["2024-05-01T11:00Z", "2024-05-01T12:00Z"]
    assert ended.last_at_or_before(z("2030-01-01T00:00Z")) == z("2024-05-01T12:00Z")
    assert OccurrenceSeries(start, cron("30 10 * * *")).first == start  # startTime itself is allowed


@pytest.mark.parametrize(
    ("expression", "gap"),
    [
        ("* * * * *", timedelta(minutes=1)),
        ("0 9,17 * * *", timedelta(hours=8)),
        ("0 9 * * 1-5", timedelta(days=1)),
        ("0 0 1 * *", timedelta(days=28)),
        ("0 0 31 * *", timedelta(days=31)),  # 31 July to 31 August; not 61 (31 March to 31 May)
        ("0 0 1 1 *", timedelta(days=365)),
        ("59 23 * * 5 ", timedelta(days=7)),
        ("0 12 1 * MON", timedelta(days=1)),  # a Monday the 31st, then the 1st
    ],
)
def test_min_gap_is_the_shortest_wall_clock_distance(expression: str, gap: timedelta) -> None:
    assert OccurrenceSeries(z("2024-01-01T00:00Z"), cron(expression)).min_gap() == gap


# -- DST: the engine's wall-clock rule applies to cron series --------------------------------


def test_a_skipped_wall_time_runs_after_the_gap_and_a_repeated_one_runs_once() -> None:
    spring = OccurrenceSeries(z("2024-03-30T00:00Z"), cron("*/20 2 * * *", BERLIN))
    # 02:00, 02:20 and 02:40 do not exist on 31 March: they run once, at 03:00 CEST (01:00Z).
    assert run(spring, 5) == [
        "2024-03-30T01:00Z",
        "2024-03-30T01:20Z",
        "2024-03-30T01:40Z",
        "2024-03-31T01:00Z",
        "2024-04-01T00:00Z",
    ]
    merged = z("2024-03-31T01:00Z")
    assert spring.dst_shift(merged) == "gap"
    assert (spring.index_of(merged), spring.index_of(z("2024-04-01T00:00Z"))) == (4, 5)

    fall = OccurrenceSeries(z("2024-10-26T00:00Z"), cron("30 2 * * *", BERLIN))
    # 02:30 happens twice on 27 October (00:30Z CEST, 01:30Z CET): it runs at the first.
    assert run(fall, 3) == ["2024-10-26T00:30Z", "2024-10-27T00:30Z", "2024-10-28T01:30Z"]
    assert fall.dst_shift(z("2024-10-27T00:30Z")) == "fold"
    assert fall.next_after(z("2024-10-27T00:30Z")) == z("2024-10-28T01:30Z")


def test_a_cron_series_runs_up_to_the_ends_of_the_calendar() -> None:
    first, last = z("0001-01-01T00:00:00Z"), z("9999-12-31T23:59:59Z")
    assert OccurrenceSeries(first, cron("@yearly")).first == first
    # At +14, 10000-01-01T00:00 wall time is 9999-12-31T10:00Z: the last New Year within the calendar.
    kiritimati = OccurrenceSeries(z("9990-01-01T00:00Z"), cron("@yearly", "Pacific/Kiritimati"))
    assert kiritimati.last_at_or_before(last) == z("9999-12-31T10:00Z")
    assert kiritimati.next_after(z("9999-12-31T10:00Z")) is None
    assert kiritimati.index_of(z("9999-12-31T10:00Z")) == 10
