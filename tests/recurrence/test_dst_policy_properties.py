"""DST policies against zoneinfo alone, over many zones and changes (hand-derived cases: test_dst_policy.py).

* Random schedules around changes of unusual zones: the runs, labels, indexes, counts and dropped slots equal
  a minute-by-minute reading of the zone's clock.
* Every IANA zone, each change from 2000 to 2040: a daily wall time inside the gap (or the repeated interval)
  runs on the day of the change 1 time by Shift, 0 by Skip, 1 by First, 1 by Last, 2 by Both, at the change
  instant (Shift), its first instance (First) or second (Last); once the day before and once the day after.

Changes are found here independently of the engine: the offset is read every 4 days and each change bisected to
the second. No zone changes its offset twice within 4 days (the closest pairs in the tz database since 1900 are
6.96 days apart: Brazil in October 2000, Gaza in 2040).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.recurrence import FoldPolicy, Frequency, GapPolicy, OccurrenceSeries, Recurrence, Schedule
from shared.recurrence.zone_names import iana_names

SHIFT, SKIP = GapPolicy.SHIFT, GapPolicy.SKIP
FIRST, LAST, BOTH = FoldPolicy.FIRST, FoldPolicy.LAST, FoldPolicy.BOTH
DAY = 86_400
EPOCH, NAIVE_EPOCH = datetime(1970, 1, 1, tzinfo=UTC), datetime(1970, 1, 1)
LO, HI = int(datetime(2000, 1, 1, tzinfo=UTC).timestamp()), int(datetime(2041, 1, 1, tzinfo=UTC).timestamp())


def at(x: int) -> datetime:
    return EPOCH + timedelta(seconds=x)


def seconds(t: datetime) -> int:
    return (t - EPOCH) // timedelta(seconds=1)


def offset(zone: ZoneInfo, x: int) -> int:
    return (datetime.fromtimestamp(x, zone).utcoffset() or timedelta(0)) // timedelta(seconds=1)


def plain(zone: ZoneInfo, wall: datetime) -> bool:
    """The clock reads ``wall`` (naive) exactly once: neither skipped nor repeated."""
    return wall.replace(tzinfo=zone).utcoffset() == wall.replace(tzinfo=zone, fold=1).utcoffset()


@cache
def changes(name: str) -> tuple[tuple[int, int, int], ...]:
    """``(instant, offset before, offset after)`` of each change of the zone's offset from 2000 to 2040."""
    zone, found = ZoneInfo(name), []
    x, before = LO, offset(ZoneInfo(name), LO)
    while x < HI:
        y = min(x + 4 * DAY, HI)
        after = offset(zone, y)
        if after != before:
            a, b = x, y
            while b - a > 1:
                m = (a + b) // 2
                a, b = (m, b) if offset(zone, m) == before else (a, m)
            found.append((b, before, after))
        x, before = y, after
    return tuple(found)


def run_list(series: OccurrenceSeries, lo: int, hi: int) -> list[tuple[int, str | None]]:
    """The runs in [lo, hi] with their dst_shift labels."""
    out: list[tuple[int, str | None]] = []
    t = series.first_at_or_after(at(lo))
    while t is not None and t <= at(hi):
        out.append((seconds(t), series.dst_shift(t)))
        t = series.next_after(t)
    return out


# -- every zone, every change from 2000 to 2040 -------------------------------------------------------------------


def years_with_two_offsets(zone: ZoneInfo) -> int:
    """Years from 2000 to 2040 whose 1 January and 1 July offsets differ: each has a change, at least."""
    return sum(
        offset(zone, int(datetime(y, 1, 1, tzinfo=UTC).timestamp()))
        != offset(zone, int(datetime(y, 7, 1, tzinfo=UTC).timestamp()))
        for y in range(2000, 2041)
    )


@pytest.mark.parametrize("name", sorted(iana_names()))
def test_every_change_from_2000_to_2040_runs_a_wall_time_inside_it_as_the_policy_says(name: str) -> None:
    zone, checked = ZoneInfo(name), 0
    for c, before, after in changes(name):
        # The wall times the change skips (after > before) or repeats, and a whole minute among them.
        low, high = (c + before, c + after) if after > before else (c + after, c + before)
        minute = -(-low // 60) * 60
        assert minute < high, (name, at(c))
        wall = NAIVE_EPOCH + timedelta(seconds=minute + (high - minute - 1) // 120 * 60)
        w = seconds(wall.replace(tzinfo=UTC))
        day_before, day_after = wall - timedelta(days=1), wall + timedelta(days=1)
        assert plain(zone, day_before) and plain(zone, day_after), (name, at(c))
        previous = seconds(day_before.replace(tzinfo=zone))
        following = seconds(day_after.replace(tzinfo=zone))
        if after > before:
            expected = {(SHIFT, FIRST): [(c, "gap")], (SKIP, FIRST): []}
        else:
            first, second = (w - before, "fold"), (w - after, "fold-second")
            expected = {(SHIFT, FIRST): [first], (SHIFT, LAST): [second], (SHIFT, BOTH): [first, second]}
        schedule = Schedule(hours=(wall.hour,), minutes=(wall.minute,))
        for (gap, fold), on_the_day in expected.items():
            recurrence = Recurrence(Frequency.DAY, schedule=schedule, time_zone=name, gap_policy=gap, fold_policy=fold)
            series = OccurrenceSeries(at(previous - 3 * DAY), recurrence)
            context = (name, at(c), wall, gap.value, fold.value)
            assert run_list(series, previous, following) == [(previous, None), *on_the_day, (following, None)], context
            assert series.index_of(at(following)) - series.index_of(at(previous)) == len(on_the_day) + 1, context
            assert series.dst_skipped(at(previous), at(following)) == ((at(c),) if gap is SKIP else ()), context
        checked += 1
    assert checked == len(changes(name)) >= years_with_two_offsets(zone)
    if name in ("America/New_York", "Europe/London", "Australia/Lord_Howe", "Pacific/Auckland"):
        assert checked >= 80  # twice a year for 41 years (New York since 2007 on other dates: still twice)


# -- random schedules against a minute-by-minute reading of the clock -------------------------------------------

# Half-hour and 45-minute offsets and changes, a 24-hour gap (Apia, 2011-12-30), a 2-hour change (Troll), changes
# at midnight (Sao Paulo, Havana, Gaza), negative summer time (Dublin), both hemispheres.
ODD_ZONES = (
    "America/New_York",
    "Australia/Lord_Howe",
    "Pacific/Apia",
    "Pacific/Chatham",
    "Antarctica/Troll",
    "America/Sao_Paulo",
    "America/Havana",
    "Asia/Gaza",
    "Europe/Dublin",
)
Slots = Callable[[datetime], bool]


def slot_test(hours: tuple[int, ...], minutes: tuple[int, ...]) -> Slots:
    """Is a wall time (naive) a slot of an interval-1 schedule (Minute, Hour, Day)? The expansion rules for it."""

    def is_slot(wall: datetime) -> bool:
        return wall.second == 0 and (not minutes or wall.minute in minutes) and (not hours or wall.hour in hours)

    return is_slot


def read_the_clock(
    zone: ZoneInfo, is_slot: Slots, gap: GapPolicy, fold: FoldPolicy, lo: int, hi: int, start: int
) -> tuple[list[tuple[int, str | None]], list[int]]:
    """Runs (with labels) and dropped changes in [lo, hi], minute by minute, as the policies describe them."""
    runs: list[tuple[int, str | None]] = []
    dropped: list[int] = []
    for x in range(lo - lo % 60, hi + 1, 60):
        local = datetime.fromtimestamp(x, zone)
        wall = local.replace(tzinfo=None, fold=0)
        jump = offset(zone, x) - offset(zone, x - 1)
        assert offset(zone, x - 60) == offset(zone, x - 1)  # changes fall on whole minutes
        label: str | None = "none"
        if jump > 0 and any(is_slot(wall - timedelta(seconds=jump - 60 * i)) for i in range(jump // 60)):
            if gap is SHIFT:
                label = "gap"
            elif x >= start:
                dropped.append(x)
        if label == "none" and is_slot(wall):
            if plain(zone, wall):
                label = None
            elif local.fold:
                label = "fold-second" if fold in (LAST, BOTH) else "none"
            else:
                label = "fold" if fold in (FIRST, BOTH) else "none"
        if label != "none" and x >= start:
            runs.append((x, label))
    return runs, dropped


@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    name=st.sampled_from(ODD_ZONES),
    pick=st.integers(0, 10_000),
    frequency=st.sampled_from([Frequency.MINUTE, Frequency.HOUR, Frequency.DAY]),
    more_hours=st.sets(st.integers(0, 23), max_size=2),
    minutes=st.sets(st.sampled_from([0, 5, 15, 20, 30, 40, 45, 59]), min_size=1, max_size=4),
    gap=st.sampled_from(list(GapPolicy)),
    fold=st.sampled_from(list(FoldPolicy)),
    lead=st.integers(0, 2 * DAY // 60),
    queries=st.lists(st.integers(0, 3 * DAY), min_size=5, max_size=5),
)
def test_runs_match_a_minute_by_minute_reading_of_the_clock(
    name: str,
    pick: int,
    frequency: Frequency,
    more_hours: set[int],
    minutes: set[int],
    gap: GapPolicy,
    fold: FoldPolicy,
    lead: int,
    queries: list[int],
) -> None:
    zone = ZoneInfo(name)
    c = changes(name)[pick % len(changes(name))][0]
    near = {datetime.fromtimestamp(c + d, zone).hour for d in (-3600, -1, 0, 3600)}
    hours = () if frequency is Frequency.HOUR else tuple(sorted(near | more_hours))
    schedule = Schedule(hours=hours, minutes=tuple(sorted(minutes)))
    start, lo, hi = c - 60 * lead, c - 2 * DAY, c + 2 * DAY
    recurrence = Recurrence(frequency, schedule=schedule, time_zone=name, gap_policy=gap, fold_policy=fold)
    series = OccurrenceSeries(at(start), recurrence)
    expected, dropped = read_the_clock(zone, slot_test(hours, schedule.minutes), gap, fold, lo, hi, start)

    assert run_list(series, lo, hi) == expected
    instants = [x for x, _ in expected]
    assert [series.index_of(at(x)) for x in instants] == list(range(1, len(instants) + 1))
    assert series.dst_skipped(at(lo), at(hi)) == tuple(at(x) for x in dropped)
    for q in (start - 3600 + delay for delay in queries):
        later = [x for x in instants if x > q]
        if later:
            assert series.next_after(at(q)) == at(later[0])
        earlier = [x for x in instants if x <= min(q, hi)]
        assert series.last_at_or_before(at(min(q, hi))) == (at(earlier[-1]) if earlier else None)
    for n in sorted({1, (len(instants) + 1) // 2, len(instants)} - {0}):
        bounded = OccurrenceSeries(at(start), replace(recurrence, count=n))
        assert bounded.end == at(instants[n - 1]) and bounded.next_after(at(instants[n - 1])) is None
