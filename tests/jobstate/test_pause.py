"""A job's pause, without storage: planned at its `until`, the resume step there under each missed-run policy
(never firing before `until`), the ledger naming each paused occurrence with the note, and a pause that ends
early or holds nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared import jobstate
from shared.keys import JobKey
from shared.model import JobProperties, JobState, LedgerReason
from shared.occurrence import Trigger
from shared.records import JobRecord

NOW = datetime(2026, 12, 1, 8, 0, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
UNTIL = NOW + 5 * HOUR + timedelta(minutes=30)  # 13:30: the hourly 09:00 .. 13:00 are held


def stamp(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def job(policy: dict[str, Any] | None = None, until: datetime = UNTIL, note: str = "migration") -> JobRecord:
    properties = JobProperties.model_validate(
        {
            "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
            "startTime": stamp(NOW - 24 * HOUR),
            "recurrence": {"frequency": "Hour"},
            "pause": {"until": stamp(until), "note": note},
            **({"missedRunPolicy": policy} if policy else {}),
        }
    )
    record = JobRecord(JobKey("s", "g", "c", "j"), properties, created_time=NOW, count_origin=NOW, generation=1)
    return jobstate.planned(record, NOW)


def test_a_paused_job_is_due_at_its_until_and_marked_from_the_write() -> None:
    record = job()
    assert record.next_execution_time == UNTIL and record.state == JobState.ENABLED
    assert (record.paused_since, record.paused_by) == (NOW, "Paused")


@pytest.mark.parametrize(
    ("policy", "runs"),
    [
        (None, [NOW + 5 * HOUR]),  # Latest: the latest held one, at until
        ({"type": "Skip"}, []),
        ({"type": "All", "maxRuns": 2}, [NOW + 4 * HOUR, NOW + 5 * HOUR]),
    ],
)
def test_the_resume_runs_what_the_missed_run_policy_picks_never_before_until(policy, runs) -> None:
    record = job(policy)
    step = jobstate.dispatch_step(record, UNTIL, UNTIL - timedelta(seconds=50))  # the dispatcher works ahead
    assert list(step.queued) == runs
    assert [step.due_of(o, UNTIL - timedelta(seconds=50)) for o in step.queued] == [
        UNTIL + timedelta(seconds=i) for i in range(len(runs))
    ]
    assert step.following == NOW + 6 * HOUR
    entries = jobstate.let_go(record, step, UNTIL)
    held = [NOW + i * HOUR for i in range(6)]  # 08:00 (the write's own hour) .. 13:00
    assert sorted(e.occurrence for e in entries) == [o for o in held if o not in runs]
    assert all(e.reason == LedgerReason.PAUSED and "migration" in e.message for e in entries)
    resumed = jobstate.advanced(record, step)
    assert (resumed.paused_since, resumed.paused_by, resumed.next_execution_time) == (None, None, NOW + 6 * HOUR)
    note = jobstate.postponed_note(record, step, UNTIL)
    assert note is not None and f"held by the job's pause until {stamp(UNTIL)} (migration)" in note.message


def test_an_occurrence_at_until_runs_on_time_whatever_the_policy() -> None:
    until = NOW + 3 * HOUR
    step = jobstate.dispatch_step(job({"type": "Skip"}, until), until, until)
    assert step.queued == (until,) and step.due_of(until, until) == until
    latest = jobstate.dispatch_step(job(None, until), until, until)
    assert latest.queued == (until,)  # Latest: the on-time one is the latest; the held ones are let go


def test_a_pause_with_nothing_to_hold_marks_nothing() -> None:
    # Written at 08:01 with a pause to 08:20: the next hourly occurrence, 09:00, is after it.
    record = jobstate.planned(job(until=NOW + timedelta(minutes=20)), NOW + timedelta(minutes=1))
    assert record.next_execution_time == NOW + HOUR and record.paused_by is None
    past = jobstate.planned(job(until=NOW + 2 * HOUR), NOW + 3 * HOUR)  # planned again after until: inert
    assert past.paused_by is None and past.next_execution_time == NOW + 3 * HOUR


def test_a_write_that_lifts_the_pause_names_what_it_held() -> None:
    record = job()
    later = NOW + 2 * HOUR + timedelta(minutes=5)
    lifted = jobstate.planned(
        JobRecord(
            record.key,
            record.properties.model_copy(update={"pause": None}),
            created_time=NOW,
            count_origin=NOW,
            generation=2,
            paused_since=record.paused_since,
            paused_by=record.paused_by,
        ),
        later,
    )
    assert lifted.paused_by is None and lifted.next_execution_time == NOW + 3 * HOUR
    entries = jobstate.resumed(record, lifted, later)
    assert sorted(e.occurrence for e in entries) == [NOW, NOW + HOUR, NOW + 2 * HOUR]
    assert all(e.reason == LedgerReason.PAUSED and "migration" in e.message for e in entries)


def test_a_queued_occurrence_dropped_by_the_pause_is_named_paused() -> None:
    record = job()
    entry = jobstate.superseded(record, NOW + HOUR, Trigger.SCHEDULE, NOW + HOUR)
    assert entry is not None and entry.reason == LedgerReason.PAUSED and "migration" in entry.message


def test_preview_of_a_paused_job_lists_what_its_resume_runs_then_the_series() -> None:
    items, notes = jobstate.upcoming(job(), NOW, 3)
    assert [(u.occurrence, u.fires) for u in items] == [
        (NOW + 5 * HOUR, UNTIL),
        (NOW + 6 * HOUR, NOW + 6 * HOUR),
        (NOW + 7 * HOUR, NOW + 7 * HOUR),
    ]
    assert [n.code for n in items[0].notes] == ["Paused"] and items[1].notes == ()
    assert [n.code for n in notes] == ["Paused"] and "migration" in notes[0].message
