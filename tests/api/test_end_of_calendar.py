"""Instants at the ends of the calendar (issue 36): 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, in any time zone.

Contract: the preview and a what-if answer up to the calendar's end and say so (a job note `EndOfCalendar` beside
`value`); writes, backfill ranges and ledger filters take instants at either end; an instant outside the years 1
to 9999 in UTC is a 400 naming it; a job whose next occurrence would fall past 9999-12-31 has no further
occurrence, and the dispatcher and the API go on answering for it. Never a 500.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from shared.dispatcher import Dispatcher
from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from tests.support.clock import ManualClock
from tests.support.scheduler_client import call, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}
LAST_SECOND = "9999-12-31T23:59:59Z"


def daily_at_23_59(zone: str | None, **more: Any) -> dict[str, Any]:
    recurrence = {"frequency": "Day", "schedule": {"hours": [23], "minutes": [59]}, **more}
    if zone is not None:
        recurrence["timeZone"] = zone
    return {"properties": {"action": ACTION, "recurrence": recurrence}}


def codes(notes: list[dict[str, str]]) -> list[str]:
    return [note["code"] for note in notes]


@pytest.fixture
def rt(settings, clock: ManualClock) -> Iterator[Runtime]:
    runtime = Runtime.create(settings, clock)
    make_collection(runtime)
    yield runtime
    runtime.close()


@pytest.mark.parametrize("start", [LAST_SECOND, "9999-12-31T23:59:59.9999999Z", "9999-12-31T23:59:59+00:00"])
def test_the_preview_from_the_last_second_of_9999_in_kiritimati_answers_no_occurrence_and_says_why(
    rt: Runtime, start: str
) -> None:
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "k", daily_at_23_59("Pacific/Kiritimati"), query=NEWER).status == 201
    answer = call(rt, "Jobs_ListOccurrences", "GET", "k", query={**NEWER, "count": "1000", "from": start})
    assert answer.status == 200, answer.body
    assert answer.body["value"] == [] and codes(answer.body["notes"]) == ["EndOfCalendar"]


@pytest.mark.parametrize(
    ("zone", "last"),
    [
        ("Pacific/Kiritimati", "9999-12-31T09:59:00Z"),  # UTC+14: its 9999-12-31T23:59
        ("Etc/GMT+12", "9999-12-31T11:59:00Z"),  # UTC-12: its 9999-12-30T23:59 (its 31st ends in year 10000)
        (None, "9999-12-31T23:59:00Z"),
    ],
)
def test_the_preview_stops_at_the_last_occurrence_of_9999_with_a_note(rt: Runtime, zone: str | None, last: str) -> None:
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "d", daily_at_23_59(zone), query=NEWER).status == 201
    answer = call(rt, "Jobs_ListOccurrences", "GET", "d", query={**NEWER, "count": "1000", "from": "9999-12-20"})
    assert answer.status == 200, answer.body
    times = [o["occurrenceTime"] for o in answer.body["value"]]
    assert len(times) in (11, 12) and times[-1] == last
    assert codes(answer.body["notes"]) == ["EndOfCalendar"]
    shorter = call(rt, "Jobs_ListOccurrences", "GET", "d", query={**NEWER, "count": "3", "from": "9999-12-20"})
    assert len(shorter.body["value"]) == 3 and shorter.body["notes"] == []  # more follow: no note


def test_a_what_if_with_a_from_at_the_end_of_the_calendar_answers_and_writes_nothing(rt: Runtime) -> None:
    query = {**NEWER, "whatIf": "true", "count": "1000", "from": LAST_SECOND}
    answer = call(rt, "Jobs_CreateOrUpdate", "PUT", "w", daily_at_23_59("Pacific/Kiritimati"), query=query)
    assert answer.status == 200, answer.body
    assert answer.body["occurrences"]["value"] == []
    assert codes(answer.body["occurrences"]["notes"]) == ["EndOfCalendar"]
    assert call(rt, "Jobs_Get", "GET", "w", query=NEWER).status == 404


def test_a_from_outside_the_years_1_to_9999_in_utc_is_a_400(rt: Runtime) -> None:
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "k", daily_at_23_59("Pacific/Kiritimati"), query=NEWER).status == 201
    for start in ("9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"):
        answer = call(rt, "Jobs_ListOccurrences", "GET", "k", query={**NEWER, "from": start})
        assert answer.status == 400, answer.body
        assert answer.body["error"]["message"].startswith("from:") and "1 to 9999" in answer.body["error"]["message"]


def test_instants_at_both_ends_in_a_job_a_backfill_and_a_ledger_filter(rt: Runtime, clock: ManualClock) -> None:
    body = {
        "properties": {
            "startTime": "0001-01-01T00:00:00Z",  # 0000-12-31T12:00 on the zone's clock
            "action": ACTION,
            "recurrence": {"frequency": "Year", "timeZone": "Etc/GMT+12", "endTime": "9999-12-31T23:59:59.9999999Z"},
        }
    }
    put = call(rt, "Jobs_CreateOrUpdate", "PUT", "old", body, query=NEWER)
    assert put.status == 201, put.body
    assert put.body["properties"]["recurrence"]["endTime"] == "9999-12-31T23:59:59.9999999Z"
    upcoming = call(rt, "Jobs_ListOccurrences", "GET", "old", query={**NEWER, "count": "2", "from": "0001-01-01"})
    assert upcoming.status == 200 and upcoming.body["value"][0]["occurrenceTime"] == "2027-01-01T00:00:00Z"
    last = call(rt, "Jobs_ListOccurrences", "GET", "old", query={**NEWER, "count": "5", "from": "9998-06-01"})
    assert [o["occurrenceTime"] for o in last.body["value"]] == ["9999-01-01T00:00:00Z"]
    assert codes(last.body["value"][0]["notes"]) == ["EndByEndTime"] and last.body["notes"] == []
    backfill = call(
        rt, "Jobs_Backfill", "POST", "old", {"from": "0001-01-01T00:00:00Z", "to": "0004-01-01T00:00:00Z"}, NEWER
    )
    assert backfill.status == 200, backfill.body
    assert [o["occurrenceTime"] for o in backfill.body["value"]] == [
        "0001-01-01T00:00:00Z",
        "0002-01-01T00:00:00Z",
        "0003-01-01T00:00:00Z",
    ]
    wide = "occurrenceTime ge 0001-01-01T00:00:00Z and occurrenceTime le 9999-12-31T23:59:59.9999999Z"
    ledger = call(rt, "Jobs_ListJobHistory", "GET", "old", query={**NEWER, "$filter": wide})
    assert ledger.status == 200, ledger.body


def test_a_job_whose_next_occurrence_would_fall_after_9999_has_none_and_stays_readable(settings) -> None:
    clock = ManualClock(datetime(9999, 12, 31, 9, 50, 30, tzinfo=UTC))  # beyond the dispatch horizon of 09:59
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    kiritimati = call(rt, "Jobs_CreateOrUpdate", "PUT", "k", daily_at_23_59("Pacific/Kiritimati"), query=NEWER)
    assert kiritimati.status == 201, kiritimati.body
    assert kiritimati.body["properties"]["status"]["nextExecutionTime"] == "9999-12-31T09:59:00Z"
    spread = daily_at_23_59(None)
    spread["properties"]["spreadWindow"] = "PT1H"  # 23:59 plus its offset would fall after the calendar's end
    spread["properties"]["expectSuccessWithin"] = "P540D"
    put = call(rt, "Jobs_CreateOrUpdate", "PUT", "s", spread, query=NEWER)
    assert put.status == 201, put.body
    assert "9999-12-31T23:59:00Z" <= put.body["properties"]["status"]["nextExecutionTime"] <= LAST_SECOND
    preview = call(rt, "Jobs_ListOccurrences", "GET", "s", query={**NEWER, "count": "10"})
    assert [o["occurrenceTime"] for o in preview.body["value"]] == ["9999-12-31T23:59:00Z"]
    assert preview.body["value"][0]["fireTime"] <= LAST_SECOND
    assert codes(preview.body["notes"]) == ["EndOfCalendar"]

    clock.current = datetime(9999, 12, 31, 9, 58, 10, tzinfo=UTC)
    report = Dispatcher(rt.store, clock).tick()  # queues k's last occurrence and finds none after it
    assert report.failed == 0 and report.enqueued == 1
    got = call(rt, "Jobs_Get", "GET", "k", query=NEWER)
    assert got.status == 200, got.body
    assert got.body["properties"]["state"] == "enabled"
    assert got.body["properties"]["status"]["nextExecutionTime"] == "9999-12-31T09:59:00Z"  # queued, the last
    again = call(rt, "Jobs_ListOccurrences", "GET", "k", query=NEWER)
    assert again.status == 200 and [o["occurrenceTime"] for o in again.body["value"]] == ["9999-12-31T09:59:00Z"]
    assert codes(again.body["notes"]) == ["EndOfCalendar"]
    clock.current = datetime(9999, 12, 31, 10, 0, 10, tzinfo=UTC)
    later = Dispatcher(rt.store, clock).tick()
    assert later.failed == 0 and later.enqueued == 0
    listed = call(rt, "Jobs_List", "GET", "", query=NEWER)
    assert listed.status == 200 and {j["name"] for j in listed.body["value"]} == {"jc1/s", "jc1/k"}
