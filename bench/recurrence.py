"""How fast the recurrence engine answers "next occurrence after t", beside dateutil's rrule.

    python bench/recurrence.py

Cases (issue 4): (a) Minute/1 started 10 years ago, (b) a Month schedule with hours, minutes and
monthlyOccurrences started 10 years ago, (c) count = 1,000,000 near its end. Each prints the median
time of one OccurrenceSeries.next_after call and of rrule.after (cache=False, rrule built once) on
the same inputs, their ratio, and whether both gave the same instant. Targets: median <= 20 us and
>= 20x faster than rrule. A figure, not a test: nothing here asserts. rrule walks period by period,
so case (a) costs it ~13 s and is timed once; the whole script takes ~20 s. Recorded (bench/figures.py, when
BENCH_FIGURES names a file) as bench "recurrence", one phase per case.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dateutil import rrule as rr  # noqa: E402

from bench.figures import record  # noqa: E402
from shared.recurrence import (  # noqa: E402
    Frequency,
    MonthlyOccurrence,
    OccurrenceSeries,
    Recurrence,
    Schedule,
    WeekDay,
)

NOW = datetime(2025, 6, 15, 12, 34, 56, tzinfo=UTC)
TEN_YEARS_AGO = datetime(2015, 6, 15, 8, 0, 30, tzinfo=UTC)
NEW_YORK = "America/New_York"
# The cases' phases in the recorded figures, in the order of `main`'s rows.
KEYS = ("a-minute-10y", "b-month-10y", "c-count-1000000", "d-day-new-york-10y")


def median_us(call: Callable[[datetime], object], queries: list[datetime], batch: int) -> float:
    """Median over batches of the per-call time, in microseconds."""
    samples = []
    for start in range(0, len(queries), batch):
        chunk = queries[start : start + batch]
        began = time.perf_counter()
        for t in chunk:
            call(t)
        samples.append((time.perf_counter() - began) / len(chunk) * 1e6)
    return statistics.median(samples)


def naive(dt: datetime) -> datetime:
    return dt.replace(tzinfo=None)


def as_utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt.astimezone(UTC) if dt.tzinfo else dt.replace(tzinfo=UTC)


def case(name: str, series: OccurrenceSeries, rule: rr.rrule, near: datetime, rrule_runs: int) -> tuple:
    queries = [near + timedelta(seconds=37 * i) for i in range(20_000)]
    series.next_after(near)  # warm lazily built tables, as a long-lived process would have them
    ours = median_us(series.next_after, queries, batch=100)
    aware_rule = rule._dtstart.tzinfo is not None  # rrule compares like with like
    ask = (lambda t: t.astimezone(rule._dtstart.tzinfo)) if aware_rule else naive
    answers: list[datetime | None] = []
    theirs = median_us(lambda t: answers.append(rule.after(ask(t))), queries[:rrule_runs], batch=1)
    same = series.next_after(near) == as_utc(answers[0])  # queries[0] is `near`
    return name, ours, theirs, same


def main() -> None:
    monthly = Schedule(
        minutes=(15, 45),
        hours=(5, 17),
        monthly_occurrences=(MonthlyOccurrence(WeekDay.WEDNESDAY, 3), MonthlyOccurrence(WeekDay.FRIDAY, -1)),
    )
    million_start = NOW - timedelta(minutes=999_000)
    half_hours = Schedule(minutes=(0, 30))
    rows = [
        case(
            "(a) Minute/1, started 10 years ago",
            OccurrenceSeries(TEN_YEARS_AGO, Recurrence(Frequency.MINUTE)),
            rr.rrule(rr.MINUTELY, dtstart=naive(TEN_YEARS_AGO), cache=False),
            NOW,
            rrule_runs=1,
        ),
        case(
            "(b) Month 3rd Wed + last Fri x 05/17 x :15/:45, 10 y",
            OccurrenceSeries(TEN_YEARS_AGO, Recurrence(Frequency.MONTH, schedule=monthly)),
            rr.rrule(
                rr.MONTHLY,
                dtstart=naive(TEN_YEARS_AGO),
                byweekday=[rr.WE(3), rr.FR(-1)],
                byhour=(5, 17),
                byminute=(15, 45),
                bysecond=0,
                cache=False,
            ),
            NOW,
            rrule_runs=15,
        ),
        case(
            "(c) Minute/1 count=1,000,000, near its end",
            OccurrenceSeries(million_start, Recurrence(Frequency.MINUTE, count=1_000_000)),
            rr.rrule(rr.MINUTELY, dtstart=naive(million_start), count=1_000_000, cache=False),
            NOW,
            rrule_runs=2,
        ),
        case(
            "(d) Day :00/:30 in America/New_York, 10 y (extra)",
            OccurrenceSeries(TEN_YEARS_AGO, Recurrence(Frequency.DAY, schedule=half_hours, time_zone=NEW_YORK)),
            rr.rrule(
                rr.DAILY,
                dtstart=TEN_YEARS_AGO.astimezone(ZoneInfo(NEW_YORK)),
                byhour=range(24),
                byminute=(0, 30),
                bysecond=0,
                cache=False,
            ),
            NOW,
            rrule_runs=5,
        ),
    ]
    print(f"{'case':<54} {'next_after':>12} {'rrule.after':>14} {'speed-up':>10}  same")
    phases: dict[str, dict[str, Any]] = {}
    for key, (name, ours, theirs, same) in zip(KEYS, rows, strict=True):
        print(f"{name:<54} {ours:>9.2f} us {theirs:>11.0f} us {theirs / ours:>9.0f}x  {'yes' if same else 'NO'}")
        phases[key] = {
            "case": name,
            "next_after_us": round(ours, 3),
            "rrule_after_us": round(theirs, 1),
            "speed_up": round(theirs / ours, 1),
            "same_answer": same,
        }
    record("recurrence", phases)


if __name__ == "__main__":
    main()
