"""Property test: cron series agree with a brute-force walker written here, an independent oracle.

The strategy builds each expression from parts whose value sets it computes itself, so the walker
never uses the engine's parser. The walker steps through wall-clock days (testing each date against
the sets and Vixie's day rule) and, on matching days, through the matching minutes; it maps a wall
minute ``w`` to the first instant whose wall-clock reading is at least ``w`` (the engine's DST rule: a
skipped time runs when the gap ends, a repeated one at its first instance), found with zoneinfo and,
inside a gap, by stepping minute by minute.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from shared.recurrence import Frequency, OccurrenceSeries, Recurrence, RecurrenceError

MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
LONGEST = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}
ZONES = (None, "Europe/Berlin", "America/New_York", "Australia/Lord_Howe")  # Lord Howe shifts by 30 minutes
MINUTE = timedelta(minutes=1)
DAYS_1_31, MONTHS_1_12 = frozenset(range(1, 32)), frozenset(range(1, 13))
LATE_DAYS = [("30", {30}), ("31", {31}), ("30-31", {30, 31}), ("29/2", {29, 31}), ("29", {29})]
SHORT_MONTHS = [("2", {2}), ("feb", {2}), ("4,6,9,11", {4, 6, 9, 11}), ("APR-JUN/2", {4, 6}), ("2-4/2", {2, 4})]
PROPERTY = settings(
    max_examples=int(os.environ.get("RECURRENCE_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@dataclass(frozen=True)
class Cron:
    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    either: bool  # both day fields restricted (neither starts with '*')

    def runs_on(self, d: date) -> bool:
        by_day, by_weekday = d.day in self.days, (d.weekday() + 1) % 7 in self.weekdays
        return d.month in self.months and ((by_day or by_weekday) if self.either else (by_day and by_weekday))

    def fires(self) -> bool:
        """Whether any date ever matches: a weekday set meets every date in some year of a 400-year cycle."""
        return self.either or any(d <= LONGEST[m] for m in self.months for d in self.days)

    @property
    def times(self) -> list[time]:
        return [time(h, m) for h in sorted(self.hours) for m in sorted(self.minutes)]


# -- expressions: text and value set built together -------------------------------------------------


@st.composite
def field(draw: st.DrawFn, low: int, high: int, names: tuple[str, ...] = (), name_base: int = 0) -> tuple[str, set]:
    def token(value: int) -> str:
        i = value - name_base
        if names and 0 <= i < len(names) and draw(st.booleans()):
            return draw(st.sampled_from([names[i], names[i].lower(), names[i].title()]))
        return str(value)

    parts, values = [], set()
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["*", "*/n", "a", "a", "a-b", "a-b/n", "a/n"]))
        a = draw(st.integers(low, high))
        b = draw(st.integers(a, high))
        n = draw(st.integers(1, high))
        text, chosen = {
            "*": ("*", range(low, high + 1)),
            "*/n": (f"*/{n}", range(low, high + 1, n)),
            "a": (token(a), range(a, a + 1)),
            "a-b": (f"{token(a)}-{token(b)}", range(a, b + 1)),
            "a-b/n": (f"{token(a)}-{token(b)}/{n}", range(a, b + 1, n)),
            "a/n": (f"{token(a)}/{n}", range(a, high + 1, n)),
        }[kind]
        parts.append(text)
        values.update(chosen)
    return ",".join(parts), values


@st.composite
def expressions(draw: st.DrawFn) -> Cron:
    minute, minutes = draw(field(0, 59))
    hour, hours = draw(field(0, 23))
    # late days in short months, now and then, so that some expressions never fire
    day, days = draw(st.one_of(field(1, 31), st.sampled_from(LATE_DAYS)))
    month, months = draw(st.one_of(field(1, 12, MONTHS, 1), st.sampled_from(SHORT_MONTHS)))
    weekday, weekdays = draw(field(0, 7, DAYS, 0))
    text = draw(st.sampled_from([" ", "\t", "  "])).join([minute, hour, day, month, weekday])
    either = not day.startswith("*") and not weekday.startswith("*")
    sets = (minutes, hours, days, months, {w % 7 for w in weekdays})
    return Cron(text, *map(frozenset, sets), either)


# -- the walker ------------------------------------------------------------------------------------


def wall_of(x: datetime, zone: ZoneInfo | None) -> datetime:
    return x.replace(tzinfo=None) if zone is None else x.astimezone(zone).replace(tzinfo=None)


def instant(w: datetime, zone: ZoneInfo | None) -> datetime:
    """The first instant whose wall-clock reading is at least ``w``."""
    if zone is None:
        return w.replace(tzinfo=UTC)
    first = w.replace(tzinfo=zone).astimezone(UTC)  # fold=0: the earlier of two readings
    if wall_of(first, zone) == w:
        return first
    x = w.replace(tzinfo=zone, fold=1).astimezone(UTC)  # inside a gap: an instant before it
    while wall_of(x, zone) < w:
        x += MINUTE
    return x


def walk_next(cron: Cron, zone: ZoneInfo | None, after: datetime, start: datetime) -> datetime | None:
    floor = max(after.replace(microsecond=0) + timedelta(seconds=1), start)
    d = wall_of(floor, zone).date() - timedelta(days=1)
    for _ in range(60 * 366):  # the longest wait: 29 February on a given weekday, across 2100 (40 years)
        if cron.runs_on(d):
            for t in cron.times:
                x = instant(datetime.combine(d, t), zone)
                if x >= floor:
                    return x
        d += timedelta(days=1)
    return None


def walk_last(cron: Cron, zone: ZoneInfo | None, upto: datetime, start: datetime) -> datetime | None:
    d = wall_of(upto, zone).date() + timedelta(days=1)
    while d >= wall_of(start, zone).date() - timedelta(days=1):
        if cron.runs_on(d):
            for t in reversed(cron.times):
                x = instant(datetime.combine(d, t), zone)
                if x <= upto:
                    return x if x >= start else None
        d -= timedelta(days=1)
    return None


def walk_count(cron: Cron, zone: ZoneInfo | None, lo: datetime, hi: datetime) -> int:
    """Distinct occurrence instants in [lo, hi]; days untouched by a clock change count without stepping."""
    total = 0
    d, last = wall_of(lo, zone).date() - timedelta(days=1), wall_of(hi, zone).date() + timedelta(days=1)
    times = cron.times
    while d <= last:
        if cron.runs_on(d):
            first, final = instant(datetime.combine(d, times[0]), zone), instant(datetime.combine(d, times[-1]), zone)
            plain = final - first == datetime.combine(d, times[-1]) - datetime.combine(d, times[0])
            if plain and lo <= first and final <= hi:
                total += len(times)
            elif final >= lo and first <= hi:
                total += len({x for t in times if lo <= (x := instant(datetime.combine(d, t), zone)) <= hi})
        d += timedelta(days=1)
    return total


# -- the property ---------------------------------------------------------------------------------

SECONDS = st.integers(0, 59)
STARTS = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2450, 12, 31))
NEAR_2400 = st.datetimes(min_value=datetime(2399, 12, 20), max_value=datetime(2400, 3, 10))
DISTANCES = st.one_of(
    st.integers(-2 * 86_400, 3 * 86_400),  # around startTime
    st.integers(0, 2 * 366 * 86_400),  # within two years: counted too
    st.integers(0, 500 * 366 * 86_400),  # centuries apart
)


def test_cron_series_agree_with_the_brute_force_walker() -> None:
    compared = {"next": 0, "last": 0, "count": 0, "zoned": 0, "never": 0, "2400": 0}

    @PROPERTY
    @given(
        cron=expressions(),
        zone_name=st.sampled_from(ZONES),
        start=STARTS,
        distance=DISTANCES,
        near_2400=st.one_of(st.none(), st.none(), st.none(), NEAR_2400),
        count=st.integers(1, 12),
    )
    @example(  # around 29 February 2400 in Berlin, whatever the draw
        cron=Cron(
            "30 9 * * 1-5", frozenset({30}), frozenset({9}), DAYS_1_31, MONTHS_1_12, frozenset(range(1, 6)), False
        ),
        zone_name="Europe/Berlin",
        start=datetime(2399, 3, 1),
        distance=0,
        near_2400=datetime(2400, 2, 28, 12),
        count=3,
    )
    def agree(
        cron: Cron, zone_name: str | None, start: datetime, distance: int, near_2400: datetime | None, count: int
    ) -> None:
        recurrence = Recurrence(Frequency.DAY, cron=cron.text, time_zone=zone_name)
        start = start.replace(tzinfo=UTC)
        if near_2400 is not None:
            start = min(start, datetime(2399, 1, 1, tzinfo=UTC))
            asked = near_2400.replace(tzinfo=UTC)
        else:
            asked = start + timedelta(seconds=distance)
        assume(asked.year < 2900)
        first_allowed = start.replace(microsecond=0)
        if not cron.fires():
            try:
                OccurrenceSeries(start, recurrence)
            except RecurrenceError as refused:
                assert "never fires" in refused.message
                compared["never"] += 1
                return
            raise AssertionError(f"{cron.text!r} never fires but was accepted")
        series = OccurrenceSeries(start, recurrence)
        zone = None if zone_name is None else ZoneInfo(zone_name)

        following = series.next_after(asked)
        assert following == walk_next(cron, zone, asked, first_allowed), cron.text
        before = series.last_at_or_before(asked)
        assert before == walk_last(cron, zone, asked, first_allowed), cron.text
        compared["next"] += 1
        compared["last"] += before is not None
        compared["zoned"] += zone is not None
        compared["2400"] += asked.year == 2400
        for occurrence in (before, following):
            if occurrence is not None and occurrence - start < timedelta(days=800):
                assert series.index_of(occurrence) == walk_count(cron, zone, first_allowed, occurrence), cron.text
                compared["count"] += 1

        bounded = OccurrenceSeries(start, Recurrence(Frequency.DAY, count=count, cron=cron.text, time_zone=zone_name))
        nth = first_allowed - timedelta(seconds=1)
        for _ in range(count):
            found = walk_next(cron, zone, nth, first_allowed)
            assert found is not None
            nth = found
        assert bounded.end == nth and bounded.next_after(nth) is None, cron.text

    agree()
    examples = PROPERTY.max_examples
    assert compared["next"] >= examples // 2 and compared["count"] >= examples // 6, compared
    assert compared["zoned"] >= examples // 6 and compared["2400"] >= 1, compared


def test_counts_agree_with_the_walker_centuries_apart() -> None:
    expressions_ = [
        Cron("0 0 29 2 *", frozenset({0}), frozenset({0}), frozenset({29}), frozenset({2}), frozenset(range(7)), False),
        # 02:00-02:40 on Sundays: every spring gap and autumn repetition in Berlin meets some
        Cron(
            "*/20 2 13 * FRI,SUN",
            frozenset({0, 20, 40}),
            frozenset({2}),
            frozenset({13}),
            frozenset(range(1, 13)),
            frozenset({0, 5}),
            True,
        ),
    ]
    start = datetime(1999, 7, 1, 12, tzinfo=UTC)
    for cron in expressions_:
        for zone_name, end in (
            (None, datetime(2400, 12, 31, tzinfo=UTC)),
            ("Europe/Berlin", datetime(2130, 1, 1, tzinfo=UTC)),
        ):
            zone = None if zone_name is None else ZoneInfo(zone_name)
            series = OccurrenceSeries(start, Recurrence(Frequency.DAY, cron=cron.text, time_zone=zone_name))
            last = series.last_at_or_before(end)
            assert last is not None and last == walk_last(cron, zone, end, start)
            assert series.index_of(last) == walk_count(cron, zone, start, last), (cron.text, zone_name)
    leap_days = OccurrenceSeries(start, Recurrence(Frequency.DAY, cron="0 0 29 2 *"))
    assert leap_days.index_of(datetime(2400, 2, 29, tzinfo=UTC)) == 98  # 2000-2396 (97) and 2400
