"""A job's exceptions laid over its series, without storage: what planning, dispatch, catch-up and preview walk
(skip, move, add), what the ledger says of what they took out, and that the recurrence itself is untouched."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from shared import jobstate
from shared.keys import JobKey
from shared.model import JobProperties, JobState, LedgerReason
from shared.records import JobRecord

NOW = datetime(2026, 12, 1, 8, 0, 0, tzinfo=UTC)
DAY = timedelta(days=1)
T0 = NOW.replace(hour=14)  # the daily 14:00, from today


def stamp(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def job(*exceptions: dict[str, Any], recurrence: dict[str, Any] | None = None) -> JobRecord:
    properties = JobProperties.model_validate(
        {
            "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
            "startTime": stamp(T0),
            "recurrence": recurrence or {"frequency": "Day"},
            "exceptions": list(exceptions),
        }
    )
    record = JobRecord(JobKey("s", "g", "c", "j"), properties, created_time=NOW, count_origin=T0, generation=1)
    return jobstate.planned(record, NOW)


def walk(record: JobRecord, n: int) -> list[datetime]:
    series = jobstate.series_of(record)
    found: list[datetime] = []
    cursor = series.first(NOW)
    while cursor is not None and len(found) < n:
        found.append(cursor)
        cursor = series.following(cursor)
    return found


def test_a_skip_takes_one_occurrence_out_and_the_next_stays_on_time() -> None:
    record = job({"type": "Skip", "occurrence": stamp(T0 + DAY)})
    assert walk(record, 3) == [T0, T0 + 2 * DAY, T0 + 3 * DAY]
    series = jobstate.series_of(record)
    assert series.previous(T0 + 2 * DAY) == T0 and series.latest_missed(T0 + DAY + timedelta(hours=1)) == T0
    assert series.repeat_count(T0 + 2 * DAY) == 3  # the recurrence's own count is untouched
    assert walk(job(), 3) == [T0, T0 + DAY, T0 + 2 * DAY]


def test_a_move_runs_the_occurrence_once_at_its_new_instant_and_an_add_runs_once_more() -> None:
    moved = T0 + DAY + timedelta(hours=1)
    extra = T0 + 2 * DAY + timedelta(hours=5)
    record = job(
        {"type": "Move", "occurrence": stamp(T0 + DAY), "moveTo": stamp(moved)},
        {"type": "Add", "occurrence": stamp(extra)},
    )
    assert walk(record, 5) == [T0, moved, T0 + 2 * DAY, extra, T0 + 3 * DAY]
    series = jobstate.series_of(record)
    assert series.repeat_count(moved) == 0 and series.repeat_count(extra) == 0  # outside the counted series
    assert series.excepted(moved) is not None and series.excepted(moved)[0] == LedgerReason.MOVED  # type: ignore[index]
    assert series.excepted(extra)[0] == LedgerReason.EXTRA  # type: ignore[index]
    assert series.ends_with(extra) is None


def test_a_move_earlier_than_the_occurrence_before_it_keeps_the_order() -> None:
    moved = T0 + timedelta(hours=4)  # 18:00 of the first day: before the nominal 14:00 of the second
    record = job({"type": "Move", "occurrence": stamp(T0 + DAY), "moveTo": stamp(moved)})
    assert walk(record, 3) == sorted(walk(record, 3)) == [T0, moved, T0 + 2 * DAY]


def test_an_added_run_after_the_series_end_still_runs() -> None:
    extra = T0 + 5 * DAY
    record = job({"type": "Add", "occurrence": stamp(extra)}, recurrence={"frequency": "Day", "count": 2})
    assert walk(record, 5) == [T0, T0 + DAY, extra]
    assert jobstate.series_of(record).ends_with(T0 + DAY) is None  # something follows
    assert jobstate.series_of(record).ends_with(extra) is None


def test_the_dispatcher_walks_the_excepted_series_and_the_ledger_names_what_it_passed() -> None:
    record = job({"type": "Skip", "occurrence": stamp(T0 + DAY), "note": "holiday"})
    first = jobstate.dispatch_step(record, T0, T0)
    assert first.queued == (T0,) and first.following == T0 + 2 * DAY
    record = jobstate.advanced(record, first)
    step = jobstate.dispatch_step(record, T0 + 2 * DAY, T0 + 2 * DAY)
    entries = jobstate.let_go(record, step, T0 + 2 * DAY)
    assert [(e.occurrence, e.reason) for e in entries] == [(T0 + DAY, LedgerReason.EXCEPTED)]
    assert "holiday" in entries[0].message and entries[0].repeat_count == 2


def test_a_catch_up_does_not_run_an_excepted_occurrence() -> None:
    record = job({"type": "Skip", "occurrence": stamp(T0 + 2 * DAY)})
    # Found three days late: Latest runs the latest occurrence that is not excepted.
    step = jobstate.dispatch_step(record, T0, T0 + 2 * DAY + timedelta(minutes=30))
    assert step.queued == (T0 + DAY,) and step.following == T0 + 3 * DAY
    let_go = {e.occurrence: e.reason for e in jobstate.let_go(record, step, T0 + 2 * DAY)}
    assert let_go == {T0: LedgerReason.POSTPONED}
    # The excepted one lies after what this step covers: the next step names it.
    record = jobstate.advanced(record, step)
    following = jobstate.dispatch_step(record, T0 + 3 * DAY, T0 + 3 * DAY)
    named = {e.occurrence: e.reason for e in jobstate.let_go(record, following, T0 + 3 * DAY)}
    assert named == {T0 + 2 * DAY: LedgerReason.EXCEPTED}


def test_preview_shows_the_series_as_excepted() -> None:
    moved = T0 + DAY + timedelta(minutes=30)
    record = job(
        {"type": "Skip", "occurrence": stamp(T0)},
        {"type": "Move", "occurrence": stamp(T0 + DAY), "moveTo": stamp(moved)},
    )
    items, _ = jobstate.upcoming(record, NOW, 3)
    assert [u.occurrence for u in items] == [moved, T0 + 2 * DAY, T0 + 3 * DAY]
    assert record.next_execution_time == moved and record.state == JobState.ENABLED


def test_preview_notes_name_moved_extra_and_skipped_occurrences() -> None:
    moved, extra = T0 + DAY + timedelta(minutes=30), T0 + timedelta(hours=3)
    record = job(
        {"type": "Skip", "occurrence": stamp(T0 + 2 * DAY), "note": "holiday"},
        {"type": "Move", "occurrence": stamp(T0 + DAY), "moveTo": stamp(moved)},
        {"type": "Add", "occurrence": stamp(extra)},
    )
    items, notes = jobstate.upcoming(record, NOW, 4)
    assert [(u.occurrence, [n.code for n in u.notes]) for u in items] == [
        (T0, []),
        (extra, ["Extra"]),
        (moved, ["Moved"]),
        (T0 + 3 * DAY, []),
    ]
    assert [(n.code, "holiday" in n.message) for n in notes] == [("Excepted", True)]
