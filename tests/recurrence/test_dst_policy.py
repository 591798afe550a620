"""The DST policies of a wall-clock series (``gap_policy`` Shift/Skip, ``fold_policy`` First/Last/Both).

Hand-derived cases use these 2024 changes (tz database):
* America/New_York: 03-10 07:00Z 02:00 EST -> 03:00 EDT (gap 02:00-03:00);
  11-03 06:00Z 02:00 EDT -> 01:00 EST (01:00-02:00 repeated: 01:30 is 05:30Z, then 06:30Z).
* Europe/London: 03-31 01:00Z (gap 01:00-02:00); 10-27 01:00Z (01:00-02:00 repeated: 01:20 is 00:20Z, then 01:20Z).
* Australia/Lord_Howe: 04-06 15:00Z 02:00 +11 -> 01:30 +10:30 (01:30-02:00 repeated: 01:40 is 14:40Z, then
  15:10Z); 10-05 15:30Z 02:00 +10:30 -> 02:30 +11 (gap 02:00-02:30).

Rules (shared/recurrence/dst_policy.py): gap Shift runs a skipped wall time at the change instant (merged with a
slot at the gap's end), Skip does not run it (a slot at the gap's end still runs); fold First runs a repeated wall
time at its first instance, Last at its second, Both at both. Counts and indexes count runs. Properties over
every zone: test_dst_policy_properties.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from shared.recurrence import (
    FoldPolicy,
    Frequency,
    GapPolicy,
    MonthlyOccurrence,
    OccurrenceSeries,
    Recurrence,
    RecurrenceError,
    Schedule,
    WeekDay,
)

NY, LONDON, LORD_HOWE = "America/New_York", "Europe/London", "Australia/Lord_Howe"
SHIFT, SKIP = GapPolicy.SHIFT, GapPolicy.SKIP
FIRST, LAST, BOTH = FoldPolicy.FIRST, FoldPolicy.LAST, FoldPolicy.BOTH


def z(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def series(
    zone: str,
    start: str,
    frequency: Frequency,
    gap: GapPolicy = SHIFT,
    fold: FoldPolicy = FIRST,
    hours: tuple[int, ...] = (),
    minutes: tuple[int, ...] = (),
    **more: object,
) -> OccurrenceSeries:
    schedule = Schedule(hours=hours, minutes=minutes)
    recurrence = Recurrence(frequency, schedule=schedule, time_zone=zone, gap_policy=gap, fold_policy=fold, **more)  # type: ignore[arg-type]
    return OccurrenceSeries(z(start), recurrence)


def runs(s: OccurrenceSeries, n: int) -> list[str]:
    """The first n runs as 'MM-DDTHH:MMZ', with the dst_shift label after a slash."""
    out: list[str] = []
    t = s.first
    while t is not None and len(out) < n:
        label = s.dst_shift(t)
        out.append(t.strftime("%m-%dT%H:%MZ") + (f"/{label}" if label else ""))
        t = s.next_after(t)
    return out


# -- gap policy ------------------------------------------------------------------------------------------------

GAP_CASES = [
    # (id, zone, start, frequency, hours, minutes, shift runs, skip runs)
    ("ny-daily-02:30", NY, "2024-03-08T00:00Z", Frequency.DAY, (2,), (30,),
     ["03-08T07:30Z", "03-09T07:30Z", "03-10T07:00Z/gap", "03-11T06:30Z"],
     ["03-08T07:30Z", "03-09T07:30Z", "03-11T06:30Z", "03-12T06:30Z"]),
    ("ny-whole-hour-skipped", NY, "2024-03-09T12:00Z", Frequency.MINUTE, (2,), (),
     ["03-10T07:00Z/gap", "03-11T06:00Z", "03-11T06:01Z"], ["03-11T06:00Z", "03-11T06:01Z", "03-11T06:02Z"]),
    # 02:00 and 02:30 are skipped; 03:00 EDT is a real wall time: Skip still runs it, once, without a label.
    ("ny-slots-in-gap-and-at-its-end", NY, "2024-03-10T06:00Z", Frequency.HOUR, (), (0, 30),
     ["03-10T06:00Z", "03-10T06:30Z", "03-10T07:00Z/gap", "03-10T07:30Z"],
     ["03-10T06:00Z", "03-10T06:30Z", "03-10T07:00Z", "03-10T07:30Z"]),
    ("london-daily-01:30", LONDON, "2024-03-29T00:00Z", Frequency.DAY, (1,), (30,),
     ["03-29T01:30Z", "03-30T01:30Z", "03-31T01:00Z/gap", "04-01T00:30Z"],
     ["03-29T01:30Z", "03-30T01:30Z", "04-01T00:30Z", "04-02T00:30Z"]),
    ("lordhowe-daily-02:15", LORD_HOWE, "2024-10-03T00:00Z", Frequency.DAY, (2,), (15,),
     ["10-03T15:45Z", "10-04T15:45Z", "10-05T15:30Z/gap", "10-06T15:15Z"],
     ["10-03T15:45Z", "10-04T15:45Z", "10-06T15:15Z", "10-07T15:15Z"]),
    # 01:45, [02:00 02:15 skipped], 02:45 +11 (15:45Z), 03:00 (16:00Z), 03:15 (16:15Z): no slot at the gap's end.
    ("lordhowe-slots-in-gap-none-at-end", LORD_HOWE, "2024-10-05T15:00Z", Frequency.HOUR, (), (0, 15, 45),
     ["10-05T15:15Z", "10-05T15:30Z/gap", "10-05T15:45Z", "10-05T16:00Z"],
     ["10-05T15:15Z", "10-05T15:45Z", "10-05T16:00Z", "10-05T16:15Z"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("zone", "start", "frequency", "hours", "minutes", "shifted", "skipped"),
    [case[1:] for case in GAP_CASES],
    ids=[case[0] for case in GAP_CASES],
)
def test_gap_policy_runs(
    zone: str,
    start: str,
    frequency: Frequency,
    hours: tuple[int, ...],
    minutes: tuple[int, ...],
    shifted: list[str],
    skipped: list[str],
) -> None:
    assert runs(series(zone, start, frequency, SHIFT, hours=hours, minutes=minutes), len(shifted)) == shifted
    assert runs(series(zone, start, frequency, SKIP, hours=hours, minutes=minutes), len(skipped)) == skipped


def test_count_and_index_count_what_runs_around_a_gap() -> None:
    # Lord Howe minutes 0, 15, 45 from 01:30: Shift runs 15:15Z, 15:30Z (02:00 and 02:15 merged), 15:45Z, 16:00Z;
    # Skip runs 15:15Z, 15:45Z, 16:00Z, 16:15Z.
    shifted = series(LORD_HOWE, "2024-10-05T15:00Z", Frequency.HOUR, SHIFT, minutes=(0, 15, 45), count=3)
    skipped = series(LORD_HOWE, "2024-10-05T15:00Z", Frequency.HOUR, SKIP, minutes=(0, 15, 45), count=3)
    assert (shifted.end, skipped.end) == (z("2024-10-05T15:45Z"), z("2024-10-05T16:00Z"))
    assert (shifted.index_of(z("2024-10-05T15:45Z")), skipped.index_of(z("2024-10-05T15:45Z"))) == (3, 2)
    with pytest.raises(ValueError):
        skipped.index_of(z("2024-10-05T15:30Z"))
    assert skipped.last_at_or_before(z("2024-10-05T15:44Z")) == z("2024-10-05T15:15Z")
    assert skipped.next_after(z("2024-10-05T15:15Z")) == z("2024-10-05T15:45Z")
    # Minutes 0, 15, 30, 45: 02:30 is the gap's end, a real wall time; both policies run five times by 16:00Z.
    for gap in GapPolicy:
        full = series(LORD_HOWE, "2024-10-05T15:00Z", Frequency.HOUR, gap, minutes=(0, 15, 30, 45), count=5)
        assert full.end == z("2024-10-05T16:00Z") and full.index_of(z("2024-10-05T15:30Z")) == 3
        assert full.ends_by == "count" and full.is_finite


def test_dst_skipped_names_the_changes_that_dropped_a_slot() -> None:
    year = (z("2024-01-01T00:00Z"), z("2025-01-01T00:00Z"))
    change = z("2024-03-10T07:00Z")
    assert series(NY, "2024-01-01T00:00Z", Frequency.DAY, SKIP, hours=(2,), minutes=(30,)).dst_skipped(*year) == (
        change,
    )
    assert series(NY, "2024-01-01T00:00Z", Frequency.DAY, SHIFT, hours=(2,), minutes=(30,)).dst_skipped(*year) == ()
    # 03:00 EDT, the gap's end, is a real wall time: Skip runs it and drops nothing.
    assert series(NY, "2024-01-01T00:00Z", Frequency.DAY, SKIP, hours=(3,), minutes=(0,)).dst_skipped(*year) == ()
    daily = series(NY, "2024-01-01T00:00Z", Frequency.DAY, SKIP, hours=(2,), minutes=(30,))
    assert daily.dst_skipped(change, year[1]) == () and daily.dst_skipped(year[0], change) == (change,)
    assert len(daily.dst_skipped(year[0], z("2034-01-01T00:00Z"))) == 10
    # Only within the series: not before startTime, not after endTime or the last run by count.
    assert series(NY, "2024-03-11T00:00Z", Frequency.DAY, SKIP, hours=(2,), minutes=(30,)).dst_skipped(*year) == ()
    ended = series(NY, "2024-01-01T00:00Z", Frequency.DAY, SKIP, hours=(2,), minutes=(30,), end_time=z("2024-03-10"))
    assert ended.dst_skipped(*year) == ()
    counted = series(NY, "2024-03-08T00:00Z", Frequency.DAY, SKIP, hours=(2,), minutes=(30,), count=2)
    assert counted.end == z("2024-03-09T07:30Z") and counted.dst_skipped(*year) == ()
    assert series(NY, "2024-03-08T00:00Z", Frequency.DAY, SKIP, hours=(2,), minutes=(30,), count=3).dst_skipped(
        *year
    ) == (change,)


# -- fold policy -----------------------------------------------------------------------------------------------

FOLD_CASES = [
    # (id, zone, start, frequency, hours, minutes, {policy: runs})
    ("ny-daily-01:30", NY, "2024-11-01T00:00Z", Frequency.DAY, (1,), (30,), {
        FIRST: ["11-01T05:30Z", "11-02T05:30Z", "11-03T05:30Z/fold", "11-04T06:30Z"],
        LAST: ["11-01T05:30Z", "11-02T05:30Z", "11-03T06:30Z/fold-second", "11-04T06:30Z"],
        BOTH: ["11-01T05:30Z", "11-02T05:30Z", "11-03T05:30Z/fold", "11-03T06:30Z/fold-second", "11-04T06:30Z"]}),
    ("ny-half-hourly", NY, "2024-11-03T04:00Z", Frequency.HOUR, (), (0, 30), {
        FIRST: ["11-03T04:00Z", "11-03T04:30Z", "11-03T05:00Z/fold", "11-03T05:30Z/fold", "11-03T07:00Z"],
        LAST: ["11-03T04:00Z", "11-03T04:30Z", "11-03T06:00Z/fold-second", "11-03T06:30Z/fold-second",
               "11-03T07:00Z"],
        BOTH: ["11-03T04:00Z", "11-03T04:30Z", "11-03T05:00Z/fold", "11-03T05:30Z/fold", "11-03T06:00Z/fold-second",
               "11-03T06:30Z/fold-second", "11-03T07:00Z"]}),
    ("london-minutes-of-01h", LONDON, "2024-10-26T12:00Z", Frequency.MINUTE, (1,), (0, 20, 40), {
        FIRST: ["10-27T00:00Z/fold", "10-27T00:20Z/fold", "10-27T00:40Z/fold", "10-28T01:00Z"],
        LAST: ["10-27T01:00Z/fold-second", "10-27T01:20Z/fold-second", "10-27T01:40Z/fold-second", "10-28T01:00Z"],
        BOTH: ["10-27T00:00Z/fold", "10-27T00:20Z/fold", "10-27T00:40Z/fold", "10-27T01:00Z/fold-second",
               "10-27T01:20Z/fold-second", "10-27T01:40Z/fold-second", "10-28T01:00Z"]}),
    ("lordhowe-hourly-at-40", LORD_HOWE, "2024-04-06T13:00Z", Frequency.HOUR, (), (40,), {
        FIRST: ["04-06T13:40Z", "04-06T14:40Z/fold", "04-06T16:10Z"],
        LAST: ["04-06T13:40Z", "04-06T15:10Z/fold-second", "04-06T16:10Z"],
        BOTH: ["04-06T13:40Z", "04-06T14:40Z/fold", "04-06T15:10Z/fold-second", "04-06T16:10Z"]}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("zone", "start", "frequency", "hours", "minutes", "expected"),
    [case[1:] for case in FOLD_CASES],
    ids=[case[0] for case in FOLD_CASES],
)
def test_fold_policy_runs(
    zone: str,
    start: str,
    frequency: Frequency,
    hours: tuple[int, ...],
    minutes: tuple[int, ...],
    expected: dict[FoldPolicy, list[str]],
) -> None:
    for fold, runs_of_policy in expected.items():
        s = series(zone, start, frequency, fold=fold, hours=hours, minutes=minutes)
        assert runs(s, len(runs_of_policy)) == runs_of_policy, fold


def test_both_counts_each_instance_and_indexes_them_in_order() -> None:
    # NY :00 and :30 from 00:00 EDT: 04:00 04:30 05:00 05:30 | 06:00 06:30 (EST) | 07:00 ...
    ends = {FIRST: "2024-11-03T07:30Z", LAST: "2024-11-03T07:30Z", BOTH: "2024-11-03T06:30Z"}
    for fold, end in ends.items():
        counted = series(NY, "2024-11-03T04:00Z", Frequency.HOUR, fold=fold, minutes=(0, 30), count=6)
        assert counted.end == z(end) and counted.next_after(z(end)) is None, fold
    both = series(NY, "2024-11-03T04:00Z", Frequency.HOUR, fold=BOTH, minutes=(0, 30))
    assert [both.index_of(z(t)) for t in ("2024-11-03T05:30Z", "2024-11-03T06:00Z", "2024-11-03T06:30Z")] == [4, 5, 6]
    daily = series(NY, "2024-11-01T00:00Z", Frequency.DAY, fold=BOTH, hours=(1,), minutes=(30,))
    assert (daily.index_of(z("2024-11-03T05:30Z")), daily.index_of(z("2024-11-03T06:30Z"))) == (3, 4)
    assert daily.index_of(z("2024-11-04T06:30Z")) == 5
    last = series(NY, "2024-11-01T00:00Z", Frequency.DAY, fold=LAST, hours=(1,), minutes=(30,))
    assert last.index_of(z("2024-11-03T06:30Z")) == 3
    with pytest.raises(ValueError):
        last.index_of(z("2024-11-03T05:30Z"))


@pytest.mark.parametrize(
    ("query", "first", "last", "both"),
    [
        # 05:45Z is 01:45 EDT (first pass): Last has not run 01:00 or 01:30 yet.
        ("2024-11-03T05:45Z", "2024-11-03T05:30Z", "2024-11-03T04:30Z", "2024-11-03T05:30Z"),
        # 06:15Z is 01:15 EST (second pass): First ran 01:30 at 05:30Z; Last and Both ran 01:00 EST at 06:00Z.
        ("2024-11-03T06:15Z", "2024-11-03T05:30Z", "2024-11-03T06:00Z", "2024-11-03T06:00Z"),
        ("2024-11-03T06:59Z", "2024-11-03T05:30Z", "2024-11-03T06:30Z", "2024-11-03T06:30Z"),
    ],
)
def test_last_at_or_before_inside_the_repeated_hour(query: str, first: str, last: str, both: str) -> None:
    for fold, expected in ((FIRST, first), (LAST, last), (BOTH, both)):
        s = series(NY, "2024-11-03T04:00Z", Frequency.HOUR, fold=fold, minutes=(0, 30))
        assert s.last_at_or_before(z(query)) == z(expected), fold
        following = s.next_after(z(query))
        assert following is not None and s.last_at_or_before(following - timedelta(seconds=1)) == z(expected)


def test_a_series_starting_in_the_second_pass_runs_what_is_left_of_it() -> None:
    # Start 06:10Z = 01:10 EST: First ran the repeated hour already (before the start), so its first run is 02:00.
    for fold, first in ((FIRST, "2024-11-03T07:00Z"), (LAST, "2024-11-03T06:30Z"), (BOTH, "2024-11-03T06:30Z")):
        s = series(NY, "2024-11-03T06:10Z", Frequency.HOUR, fold=fold, minutes=(0, 30), count=2)
        assert s.first == z(first) and s.index_of(z(first)) == 1 and s.last_at_or_before(z(first)) == z(first)


def test_a_yearly_wall_time_in_the_repeated_or_skipped_hour() -> None:
    # 01:30 on the first Sunday of November, every 12 months, in New York: 2010-11-07 05:30Z (EDT) and 06:30Z (EST).
    def yearly(start: str, week: int, hour: int, **policy: object) -> OccurrenceSeries:
        schedule = Schedule(
            monthly_occurrences=(MonthlyOccurrence(WeekDay.SUNDAY, week),), hours=(hour,), minutes=(30,)
        )
        return OccurrenceSeries(z(start), Recurrence(Frequency.MONTH, 12, schedule=schedule, time_zone=NY, **policy))  # type: ignore[arg-type]

    both = yearly("2010-11-05T12:00Z", 1, 1, fold_policy=BOTH, count=10)
    assert runs(both, 3) == ["11-07T05:30Z/fold", "11-07T06:30Z/fold-second", "11-06T05:30Z/fold"]
    assert both.end == z("2014-11-02T06:30Z") and both.index_of(z("2012-11-04T06:30Z")) == 6
    # Months after the change, the last run is still that day's second instance (First: its first).
    for fold, last in ((FIRST, "2012-11-04T05:30Z"), (LAST, "2012-11-04T06:30Z"), (BOTH, "2012-11-04T06:30Z")):
        assert yearly("2010-11-05T12:00Z", 1, 1, fold_policy=fold).last_at_or_before(z("2013-06-01")) == z(last)
    late = yearly("2012-11-04T06:10Z", 1, 1, fold_policy=BOTH)  # started in the second pass
    assert late.first == late.last_at_or_before(z("2013-06-01")) == z("2012-11-04T06:30Z")
    # 02:30 on the second Sunday of March never exists in New York (since 2007): Skip never runs it.
    never = yearly("2010-03-05T12:00Z", 2, 2, gap_policy=SKIP)
    assert never.first is None and never.next_after(z("2020-01-01")) is None
    assert never.last_at_or_before(z("2030-01-01")) is None and not never.is_finite
    assert len(never.dst_skipped(z("2010-01-01"), z("2020-01-01"))) == 10
    assert yearly("2010-03-05T12:00Z", 2, 2, gap_policy=SKIP, count=3).end is None


def test_many_years_of_changes_are_counted_arithmetically() -> None:
    # Every 30 minutes in New York for ten years: each spring day has 46 runs (02:00, 02:30 skipped or merged
    # into 03:00), each fall day 48 by First or Last and 50 by Both (01:00 and 01:30 twice).
    start, end = z("2020-01-01T05:00Z"), z("2030-01-01T05:00Z")
    days = (end - start).days
    expected = {(SHIFT, FIRST): days * 48 - 20, (SKIP, LAST): days * 48 - 20, (SKIP, BOTH): days * 48}
    for (gap, fold), before_end in expected.items():
        s = series(NY, "2020-01-01T05:00Z", Frequency.DAY, gap, fold, minutes=(0, 30))
        assert s.index_of(end) == before_end + 1, (gap, fold)
        bounded = series(NY, "2020-01-01T05:00Z", Frequency.DAY, gap, fold, minutes=(0, 30), count=before_end + 1)
        assert bounded.end == end and bounded.ends_by == "count"


def test_policies_leave_series_without_a_wall_clock_alone() -> None:
    # An elapsed-time Hour series in a zone, and a UTC series, run the same under every policy.
    for gap, fold in ((SKIP, LAST), (SKIP, BOTH)):
        elapsed = Recurrence(Frequency.HOUR, time_zone=NY, gap_policy=gap, fold_policy=fold)
        s = OccurrenceSeries(z("2024-11-03T04:30Z"), elapsed)
        assert runs(s, 4) == ["11-03T04:30Z", "11-03T05:30Z", "11-03T06:30Z", "11-03T07:30Z"]
        utc = Recurrence(Frequency.DAY, schedule=Schedule(hours=(1,), minutes=(30,)), gap_policy=gap, fold_policy=fold)
        u = OccurrenceSeries(z("2024-11-02T00:00Z"), utc)
        assert runs(u, 2) == ["11-02T01:30Z", "11-03T01:30Z"] and u.dst_skipped(z("2024-01-01"), z("2025-01-01")) == ()


def test_policies_default_to_shift_and_first_and_refuse_other_values() -> None:
    assert (Recurrence(Frequency.DAY).gap_policy, Recurrence(Frequency.DAY).fold_policy) == (SHIFT, FIRST)
    for field, path in (("gap_policy", "dstPolicy.gap"), ("fold_policy", "dstPolicy.fold")):
        with pytest.raises(RecurrenceError) as refused:
            OccurrenceSeries(z("2024-01-01T00:00Z"), Recurrence(Frequency.DAY, time_zone=NY, **{field: "Skip"}))  # type: ignore[arg-type]
        assert refused.value.path == path
