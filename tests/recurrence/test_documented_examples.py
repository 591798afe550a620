"""The 31 documented schedule examples (docs/wire-contract.md §4.4), from a fixed startTime.

startTime is Wednesday 2024-01-10 12:25:00Z, so "at start time" means 12:25
and an unset minute means :25. The expected instants were worked out by hand
from the rules in docs/decisions.md ("Recurrence") and a 2024 calendar: January
Fridays 5/12/19/26, February 2/9/16/23 (1 Feb is a Thursday, 29 days), March
1..29, April 5..26, May 3..31, August 2..30, November 1..29; Wednesdays 3/10/17
in January and 7/14/21 in February.

``after`` rows probe a later instant where the interesting jump happens.

The examples live beside this file in ``recurrence-examples.json``: the 31 rows of the
"Examples: Recurrence Schedules" table of MicrosoftDocs/azure-docs
``articles/scheduler/scheduler-advanced-complexity.md``, transcribed once, kept as transcribed
(``meaning`` is the 08/18/2016 wording, ``meaning_2018`` the post-2018 rewrite, ``source`` names
the table row). The file is part of the repository; a missing file fails the suite.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from shared.recurrence import Frequency, MonthlyOccurrence, OccurrenceSeries, Recurrence, Schedule, WeekDay

EXAMPLES = Path(__file__).with_name("recurrence-examples.json")
START = datetime(2024, 1, 10, 12, 25, tzinfo=UTC)

# id -> occurrences from START on ("MM-DD HH:MM", all January-December 2024, UTC)
EXPECTED: dict[int, list[str]] = {
    1: ["01-11 05:25", "01-12 05:25", "01-13 05:25", "01-14 05:25"],
    2: ["01-11 05:15", "01-12 05:15", "01-13 05:15", "01-14 05:15"],
    3: ["01-10 17:15", "01-11 05:15", "01-11 17:15", "01-12 05:15"],
    4: ["01-10 17:15", "01-10 17:45", "01-11 05:15", "01-11 05:45", "01-11 17:15"],
    5: ["01-10 12:30", "01-10 12:45", "01-10 13:00", "01-10 13:15", "01-10 13:30"],
    6: ["01-10 12:25", "01-10 13:25", "01-10 14:25", "01-10 15:25"],
    7: ["01-10 13:00", "01-10 14:00", "01-10 15:00", "01-10 16:00"],
    8: ["01-10 13:15", "01-10 14:15", "01-10 15:15", "01-10 16:15"],
    9: ["01-13 17:25", "01-20 17:25", "01-27 17:25"],
    10: ["01-10 17:25", "01-12 17:25", "01-15 17:25", "01-17 17:25"],
    11: ["01-10 17:15", "01-10 17:45", "01-12 17:15", "01-12 17:45", "01-15 17:15"],
    12: ["01-10 17:25", "01-12 05:25", "01-12 17:25", "01-15 05:25"],
    13: ["01-10 17:15", "01-10 17:45", "01-12 05:15", "01-12 05:45", "01-12 17:15"],
    14: ["01-10 12:30", "01-10 12:45", "01-10 13:00", "01-10 13:15"],
    15: ["01-10 12:30", "01-10 12:45", "01-10 13:00", "01-10 13:15"],
    16: ["01-14 12:25", "01-21 12:25", "01-28 12:25", "02-04 12:25"],
    17: ["01-11 12:25", "01-16 12:25", "01-18 12:25", "01-23 12:25"],
    18: ["01-28 06:00", "02-28 06:00", "03-28 06:00", "04-28 06:00"],
    19: ["01-31 06:00", "02-29 06:00", "03-31 06:00", "04-30 06:00"],
    20: ["01-31 06:00", "02-01 06:00", "02-29 06:00", "03-01 06:00", "03-31 06:00"],
    21: ["01-31 12:25", "02-01 12:25", "02-29 12:25", "03-01 12:25"],
    22: ["01-14 12:25", "02-01 12:25", "02-14 12:25", "03-01 12:25"],
    23: ["02-02 12:25", "03-02 12:25", "04-02 12:25", "05-02 12:25"],
    24: ["02-02 05:00", "03-01 05:00", "04-05 05:00", "05-03 05:00"],
    25: ["02-02 12:25", "03-01 12:25", "04-05 12:25", "05-03 12:25"],
    26: ["01-12 12:25", "02-09 12:25", "03-15 12:25", "04-12 12:25"],
    27: ["01-26 05:15", "02-02 05:15", "02-23 05:15", "03-01 05:15", "03-29 05:15", "04-05 05:15"],
    28: ["01-26 12:25", "02-02 12:25", "02-23 12:25", "03-01 12:25", "03-29 12:25"],
    29: ["03-29 12:25", "05-31 12:25", "08-30 12:25", "11-29 12:25"],
    30: ["01-26 00:00", "01-26 00:15", "01-26 00:30", "01-26 00:45"],
    31: ["01-17 05:15", "01-17 05:45", "01-17 17:15", "01-17 17:45", "02-21 05:15"],
}

# (id, after, the occurrences strictly after it)
AFTER: list[tuple[int, str, list[str]]] = [
    (5, "01-10 23:50", ["01-11 00:00", "01-11 00:15"]),
    (7, "01-10 23:30", ["01-11 00:00", "01-11 01:00"]),
    (8, "01-10 23:15", ["01-11 00:15", "01-11 01:15"]),
    (14, "01-12 23:40", ["01-12 23:45", "01-15 00:00", "01-15 00:15"]),
    (15, "01-12 16:40", ["01-12 16:45", "01-15 09:00", "01-15 09:15"]),
    (30, "01-26 23:40", ["01-26 23:45", "02-23 00:00", "02-23 00:15"]),
]


def at(text: str) -> datetime:
    return datetime.strptime(f"2024-{text}", "%Y-%m-%d %H:%M").replace(tzinfo=UTC)


def load_examples() -> dict[int, dict[str, Any]]:
    assert EXAMPLES.is_file(), f"the documented examples are part of the repository: {EXAMPLES} is missing"
    return {item["id"]: item for item in json.loads(EXAMPLES.read_text(encoding="utf-8"))}


def to_recurrence(data: dict[str, Any]) -> Recurrence:
    """The examples' JSON (documented spelling: lowercase days, ``occurrence``) as a Recurrence."""
    raw = data.get("schedule") or {}
    day = {d.value.lower(): d for d in WeekDay}
    schedule = Schedule(
        minutes=tuple(raw.get("minutes", ())),
        hours=tuple(raw.get("hours", ())),
        week_days=tuple(day[d.lower()] for d in raw.get("weekDays", ())),
        month_days=tuple(raw.get("monthDays", ())),
        monthly_occurrences=tuple(
            MonthlyOccurrence(day[o["day"].lower()], o.get("occurrence", o.get("Occurrence")))
            for o in raw.get("monthlyOccurrences", ())
        ),
    )
    return Recurrence(Frequency(data["frequency"]), data.get("interval", 1), schedule=schedule)


def occurrences(series: OccurrenceSeries, first: datetime | None, n: int) -> list[str]:
    out = []
    t = first
    while t is not None and len(out) < n:
        out.append(t.strftime("%m-%d %H:%M"))
        t = series.next_after(t)
    return out


def test_table_covers_all_31_examples() -> None:
    assert sorted(load_examples()) == list(range(1, 32)) == sorted(EXPECTED)


@pytest.mark.parametrize("example_id", sorted(EXPECTED))
def test_documented_example(example_id: int) -> None:
    example = load_examples()[example_id]
    recurrence = to_recurrence(example["recurrence"])
    assert recurrence.frequency.value == example["frequency_assumed"]
    series = OccurrenceSeries(START, recurrence)
    expected = EXPECTED[example_id]
    assert occurrences(series, series.first_at_or_after(START), len(expected)) == expected


@pytest.mark.parametrize(("example_id", "after", "expected"), AFTER)
def test_documented_example_later(example_id: int, after: str, expected: list[str]) -> None:
    series = OccurrenceSeries(START, to_recurrence(load_examples()[example_id]["recurrence"]))
    assert occurrences(series, series.next_after(at(after)), len(expected)) == expected
