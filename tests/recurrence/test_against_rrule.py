"""Property tests: OccurrenceSeries agrees with dateutil's rrule, an independent oracle.

Every schedule the engine accepts is expressible in rrule (monthDays with
monthlyOccurrences intersect, as BYMONTHDAY with BYDAY). The translation below
restates the defaulting rules in rrule's vocabulary; rrule is then trusted for
the calendar arithmetic. To keep rrule (which walks period by period) fast when
"now" is decades after startTime, its dtstart is moved forward by whole cycles
of the schedule, which leaves the set of later occurrences unchanged.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from itertools import islice
from math import lcm
from zoneinfo import ZoneInfo

import pytest
from dateutil import rrule as rr
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shared.recurrence import (
    INTERVAL_LIMITS,
    Frequency,
    MonthlyOccurrence,
    OccurrenceSeries,
    Recurrence,
    RecurrenceError,
    Schedule,
    WeekDay,
)

RR_FREQ = {
    Frequency.MINUTE: rr.MINUTELY,
    Frequency.HOUR: rr.HOURLY,
    Frequency.DAY: rr.DAILY,
    Frequency.WEEK: rr.WEEKLY,
    Frequency.MONTH: rr.MONTHLY,
    Frequency.YEAR: rr.YEARLY,
}
RR_DAY = [rr.MO, rr.TU, rr.WE, rr.TH, rr.FR, rr.SA, rr.SU]
MAX_INTERVAL = INTERVAL_LIMITS  # the engine's own limits, not restated
# RECURRENCE_EXAMPLES=5000 runs a deeper search than the default, fast one.
PROPERTY = settings(
    max_examples=int(os.environ.get("RECURRENCE_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def oracle_kwargs(rec: Recurrence, start: datetime) -> list[dict]:
    """rrule arguments for ``rec`` started at naive wall time ``start``.

    A list, because rrule intersects plain BYDAY weekdays with numbered ones
    (``MO`` with ``MO(+1)`` gives only first Mondays), while each
    monthlyOccurrences entry adds days: such a mix becomes one rule per kind.
    """
    kwargs: dict = {"freq": RR_FREQ[rec.frequency], "interval": rec.interval, "dtstart": start, "wkst": rr.MO}
    sched = rec.schedule
    if sched is None or sched == Schedule():
        return [kwargs]  # rrule's own defaults: startTime's time, weekday, day of month, date
    kwargs["bysecond"] = 0
    if rec.frequency is Frequency.MINUTE:
        kwargs["byhour"] = sched.hours or None
        kwargs["byminute"] = sched.minutes or None
        return [kwargs]
    kwargs["byminute"] = sched.minutes or start.minute
    if rec.frequency is Frequency.HOUR:
        kwargs["byhour"] = sched.hours or None
        return [kwargs]
    kwargs["byhour"] = sched.hours or (tuple(range(24)) if sched.minutes else start.hour)
    if sched.week_days:
        kwargs["byweekday"] = [RR_DAY[d.weekday] for d in sched.week_days]
    if sched.month_days:
        kwargs["bymonthday"] = sched.month_days
    if not sched.monthly_occurrences:
        return [kwargs]
    every = [RR_DAY[o.day.weekday] for o in sched.monthly_occurrences if o.occurrence is None]
    nth = [RR_DAY[o.day.weekday](o.occurrence) for o in sched.monthly_occurrences if o.occurrence is not None]
    return [{**kwargs, "byweekday": days} for days in (every, nth) if days]


def oracle(rec: Recurrence, start: datetime) -> rr.rruleset:
    rules = rr.rruleset(cache=False)
    for kwargs in oracle_kwargs(rec, start):
        rules.rrule(rr.rrule(cache=False, **kwargs))
    return rules


def cycle_of(rec: Recurrence) -> timedelta | None:
    """A shift of dtstart that maps the schedule onto itself (None: don't shift)."""
    n = rec.interval
    return {
        Frequency.MINUTE: timedelta(minutes=lcm(n, 1440)),
        Frequency.HOUR: timedelta(hours=lcm(n, 24)),
        Frequency.DAY: timedelta(days=n),
        Frequency.WEEK: timedelta(weeks=n),
    }.get(rec.frequency)


def shifted_rule(rec: Recurrence, start: datetime, near: datetime) -> rr.rruleset:
    cycle = cycle_of(rec)
    if cycle is not None and near - start > 2 * cycle:
        start += ((near - start) // cycle - 1) * cycle
    return oracle(rec, start)


def naive(dt: datetime) -> datetime:
    return dt.astimezone(UTC).replace(tzinfo=None)


def aware(dt: datetime | None) -> datetime | None:
    return None if dt is None else dt.replace(tzinfo=UTC)


# -- strategies ------------------------------------------------------------------------

starts = st.datetimes(min_value=datetime(1972, 1, 1), max_value=datetime(2060, 12, 31)).map(
    lambda d: d.replace(microsecond=0)
)
subsets = st.lists  # readability below
week_days = st.sampled_from(list(WeekDay))


@st.composite
def recurrences(draw: st.DrawFn) -> Recurrence:
    frequency = draw(st.sampled_from(list(Frequency)))
    interval = draw(st.one_of(st.integers(1, min(3, MAX_INTERVAL[frequency])), st.integers(1, MAX_INTERVAL[frequency])))
    schedule = None
    if draw(st.booleans()):
        minutes = tuple(draw(subsets(st.integers(0, 59), max_size=4, unique=True)))
        hours = tuple(draw(subsets(st.integers(0, 23), max_size=4, unique=True)))
        kw: dict = {"minutes": minutes, "hours": hours}
        if frequency is Frequency.WEEK:
            kw["week_days"] = tuple(draw(subsets(week_days, max_size=3, unique=True)))
        if frequency is Frequency.MONTH:
            kind = draw(st.sampled_from(["days", "occurrences", "both", "none"]))
            day_values = st.integers(-31, 31).filter(bool)
            if kind in ("days", "both"):
                kw["month_days"] = tuple(draw(subsets(day_values, min_size=1, max_size=3, unique=True)))
            if kind in ("occurrences", "both"):
                occurrence = st.one_of(st.none(), st.integers(-5, 5).filter(bool))
                kw["monthly_occurrences"] = tuple(
                    draw(subsets(st.builds(MonthlyOccurrence, week_days, occurrence), min_size=1, max_size=3))
                )
        schedule = Schedule(**kw)
    return Recurrence(frequency, interval, schedule=schedule)


def series_or_skip(start: datetime, rec: Recurrence) -> OccurrenceSeries:
    try:
        return OccurrenceSeries(start, rec)
    except RecurrenceError as exc:
        # A schedule that can never fire (e.g. Minute/2 from an odd minute with
        # minutes [0]); rrule would search forever, so there is nothing to compare.
        assert exc.path == "schedule"
        assume(False)
        raise


def far_later(data: st.DataObject, start: datetime, rec: Recurrence) -> datetime:
    # Month-based rules can't be shifted, so keep them within ~70 years for rrule's sake.
    years = 70 if rec.frequency in (Frequency.MONTH, Frequency.YEAR) else 150
    seconds = data.draw(st.one_of(st.integers(-86_400, 86_400 * 40), st.integers(-86_400, 86_400 * 365 * years)))
    return start + timedelta(seconds=seconds, microseconds=data.draw(st.sampled_from([0, 0, 500_000])))


# -- properties ------------------------------------------------------------------------


@PROPERTY
@given(start=starts, rec=recurrences(), data=st.data())
def test_next_after_matches_rrule(start: datetime, rec: Recurrence, data: st.DataObject) -> None:
    series = series_or_skip(start.replace(tzinfo=UTC), rec)
    now = far_later(data, start, rec)
    rule = shifted_rule(rec, start, now)
    expected = rule.after(now.replace(microsecond=0))
    assert series.next_after(now.replace(tzinfo=UTC)) == aware(expected)
    # the following few occurrences too
    got = series.next_after(now.replace(tzinfo=UTC))
    for want in rule.xafter(expected, count=3):
        got = series.next_after(got)
        assert got == aware(want)


@PROPERTY
@given(start=starts, rec=recurrences(), data=st.data())
def test_last_at_or_before_and_first_at_or_after_match_rrule(
    start: datetime, rec: Recurrence, data: st.DataObject
) -> None:
    series = series_or_skip(start.replace(tzinfo=UTC), rec)
    now = far_later(data, start, rec).replace(microsecond=0)
    rule = shifted_rule(rec, start, now - timedelta(days=800))
    assert series.last_at_or_before(now.replace(tzinfo=UTC)) == aware(rule.before(now, inc=True))
    assert series.first_at_or_after(now.replace(tzinfo=UTC)) == aware(rule.after(now, inc=True))


@PROPERTY
@given(start=starts, rec=recurrences(), count=st.integers(1, 40))
def test_count_end_and_index_match_rrule(start: datetime, rec: Recurrence, count: int) -> None:
    series = series_or_skip(start.replace(tzinfo=UTC), Recurrence(**{**rec.__dict__, "count": count}))
    expected = list(islice(oracle(rec, start), count))
    assert series.end == aware(expected[-1])
    for i in sorted({0, len(expected) // 2, len(expected) - 1}):
        assert series.index_of(aware(expected[i])) == i + 1
    assert series.next_after(aware(expected[-1])) is None
    assert series.next_after(aware(expected[-1]) - timedelta(seconds=1)) == aware(expected[-1])


@PROPERTY
@given(start=starts, rec=recurrences(), data=st.data())
def test_index_of_far_from_start_matches_rrule_count(start: datetime, rec: Recurrence, data: st.DataObject) -> None:
    assume(rec.frequency not in (Frequency.MINUTE, Frequency.HOUR) or rec.interval > 60)
    series = series_or_skip(start.replace(tzinfo=UTC), rec)
    later = start + timedelta(days=data.draw(st.integers(0, 3 * 365)))
    expected = oracle(rec, start).between(start, later, inc=True)
    assume(expected)
    assert series.index_of(aware(expected[-1])) == len(expected)


# -- time zones: rrule on naive wall-clock time, mapped with the DST rules by brute force --

ZONES = ["Europe/London", "America/New_York", "Australia/Lord_Howe", "America/Sao_Paulo", "Asia/Kolkata"]


def run_instant(wall: datetime, zone: ZoneInfo) -> datetime:
    """When wall time ``wall`` runs: first instance if repeated, end of gap if skipped."""
    first, second = wall.replace(tzinfo=zone), wall.replace(tzinfo=zone, fold=1)
    if first.utcoffset() >= second.utcoffset():  # type: ignore[operator]
        return first.astimezone(UTC)
    instant = first.astimezone(UTC)  # reads past the gap; walk back to the jump
    for step in (timedelta(hours=1), timedelta(minutes=1), timedelta(seconds=1)):
        while (instant - step).astimezone(zone).replace(tzinfo=None) > wall:
            instant -= step
    return instant


def zoned_after(rec: Recurrence, start: datetime, zone: ZoneInfo, now: datetime, n: int) -> list[datetime]:
    """The next ``n`` distinct run instants after ``now`` (both aware UTC)."""
    local_start = start.astimezone(zone).replace(tzinfo=None)
    local_now = now.astimezone(zone).replace(tzinfo=None)
    rule = shifted_rule(rec, local_start, local_now - timedelta(days=3))
    found: list[datetime] = []
    for wall in rule.xafter(max(local_now - timedelta(hours=4), local_start), inc=True):
        instant = run_instant(wall, zone)
        if instant > now and instant >= start and instant not in found:
            found.append(instant)
            if len(found) == n:
                return found
    return found


@st.composite
def zoned_recurrences(draw: st.DrawFn) -> Recurrence:
    rec = draw(recurrences())
    return Recurrence(**{**rec.__dict__, "time_zone": draw(st.sampled_from(ZONES))})


@PROPERTY
@given(start=starts, rec=zoned_recurrences(), data=st.data())
def test_zoned_next_after_matches_rrule_on_wall_clock(start: datetime, rec: Recurrence, data: st.DataObject) -> None:
    # Minute/Hour without a schedule step in elapsed time; their wall-clock oracle would differ.
    assume(rec.schedule not in (None, Schedule()) or rec.frequency not in (Frequency.MINUTE, Frequency.HOUR))
    zone = ZoneInfo(rec.time_zone)  # type: ignore[arg-type]
    start = start.replace(tzinfo=UTC)
    series = series_or_skip(start, rec)
    # Aim at a DST change in half of the cases.
    now = far_later(data, start.replace(tzinfo=None), rec).replace(tzinfo=UTC)
    if data.draw(st.booleans()):
        now = now.replace(month=data.draw(st.sampled_from([3, 4, 9, 10, 11])), day=data.draw(st.integers(1, 28)))
        now = max(now, start - timedelta(hours=1))
    expected = zoned_after(rec, start, zone, now, 4)
    got, t = [], now
    for _ in expected:
        t = series.next_after(t)
        got.append(t)
    assert got == expected


def test_oracle_translation_sanity() -> None:
    """The oracle itself reproduces a documented example (#7: every hour on the hour)."""
    rec = Recurrence(Frequency.DAY, schedule=Schedule(minutes=(0,)))
    rule = oracle(rec, datetime(2024, 1, 10, 12, 25))
    assert list(islice(rule, 2)) == [datetime(2024, 1, 10, 13, 0), datetime(2024, 1, 10, 14, 0)]


@pytest.mark.parametrize("frequency", [Frequency.MINUTE, Frequency.HOUR])
def test_elapsed_series_matches_rrule_decades_later(frequency: Frequency) -> None:
    start = datetime(1990, 5, 6, 7, 8, 9)
    rec = Recurrence(frequency, 7)
    now = datetime(2031, 2, 3, 4, 5, 6)
    expected = shifted_rule(rec, start, now).after(now)
    assert OccurrenceSeries(start.replace(tzinfo=UTC), rec).next_after(now.replace(tzinfo=UTC)) == aware(expected)


def zoned_instants(rec: Recurrence, start: datetime, zone: ZoneInfo, until: datetime) -> list[datetime]:
    """All distinct run instants in [start, until] (aware UTC)."""
    local_start = start.astimezone(zone).replace(tzinfo=None)
    found: list[datetime] = []
    for wall in oracle(rec, local_start):
        instant = run_instant(wall, zone)
        if instant > until:
            return found
        if instant >= start and (not found or instant > found[-1]):
            found.append(instant)
    return found


# Days just before DST changes (both directions) in the zones above.
NEAR_CHANGES = st.sampled_from(
    [
        datetime(2024, 3, 30, 12),  # London forward 03-31
        datetime(2024, 10, 26, 12),  # London back 10-27
        datetime(2024, 3, 9, 12),  # New York forward 03-10
        datetime(2024, 11, 2, 12),  # New York back 11-03
        datetime(2024, 4, 5, 12),  # Lord Howe back 04-07
        datetime(2024, 10, 4, 12),  # Lord Howe forward 10-06
        datetime(2018, 11, 3, 12),  # Sao Paulo forward at midnight 11-04
        datetime(2019, 2, 15, 12),  # Sao Paulo back at midnight 02-17
    ]
)


@PROPERTY
@given(
    base=NEAR_CHANGES,
    offset=st.integers(-86_400, 86_400),
    rec=zoned_recurrences(),
    span=st.integers(0, 3 * 86_400),
)
def test_zoned_count_index_and_last_match_oracle(base: datetime, offset: int, rec: Recurrence, span: int) -> None:
    assume(rec.schedule not in (None, Schedule()) or rec.frequency not in (Frequency.MINUTE, Frequency.HOUR))
    assume(rec.frequency not in (Frequency.MINUTE, Frequency.HOUR) or rec.interval <= 120)
    zone = ZoneInfo(rec.time_zone)  # type: ignore[arg-type]
    start = (base + timedelta(seconds=offset)).replace(tzinfo=UTC)
    until = start + timedelta(seconds=span)
    series = series_or_skip(start, rec)
    expected = zoned_instants(rec, start, zone, until)
    assert series.last_at_or_before(until) == (expected[-1] if expected else None)
    if expected:
        assert series.index_of(expected[-1]) == len(expected)
        counted = series_or_skip(start, Recurrence(**{**rec.__dict__, "count": len(expected)}))
        assert counted.end == expected[-1]
        assert counted.next_after(expected[-1]) is None
