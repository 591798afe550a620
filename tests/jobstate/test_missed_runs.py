"""The missed-run policy, row by row and without storage: what a dispatch that finds a job behind runs, which
occurrences it lets go (and why), and that no number of missed occurrences stalls or disables a job."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared import jobstate
from shared.keys import JobKey
from shared.model import JobExecutionStatus, JobProperties, JobState, LedgerReason
from shared.records import JobRecord

NOW = datetime(2026, 3, 4, 10, 20, 30, tzinfo=UTC)
MIN = timedelta(minutes=1)
T0 = NOW.replace(second=0) - 10 * MIN  # the first missed occurrence; 10:10 .. 10:20 are 11 minutes


def job(policy: dict[str, Any] | None = None, state: JobState = JobState.ENABLED, **recurrence: Any) -> JobRecord:
    properties = JobProperties.model_validate(
        {
            "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
            "startTime": (T0 - timedelta(days=400)).isoformat(),
            "recurrence": recurrence or {"frequency": "Minute"},
            **({"missedRunPolicy": policy} if policy else {}),
        }
    )
    return JobRecord(
        JobKey("s", "g", "c", "j"),
        properties,
        state=state,
        created_time=T0,
        count_origin=T0,
        next_execution_time=T0,
        generation=3,
    )


def minutes(*offsets: int) -> tuple[datetime, ...]:
    return tuple(T0 + n * MIN for n in offsets)


@pytest.mark.parametrize(
    ("policy", "runs", "reason"),
    [
        (None, minutes(10), LedgerReason.POSTPONED),  # Latest, the default: the old rule
        ({"type": "Latest"}, minutes(10), LedgerReason.POSTPONED),
        ({"type": "Skip"}, (), LedgerReason.SKIPPED_BY_POLICY),
        ({"type": "All", "maxRuns": 5}, minutes(6, 7, 8, 9, 10), LedgerReason.SKIPPED_BY_POLICY),
        ({"type": "All"}, minutes(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), LedgerReason.SKIPPED_BY_POLICY),  # cap 10
        ({"type": "All", "window": "PT3M30S"}, minutes(7, 8, 9, 10), LedgerReason.SKIPPED_BY_POLICY),
        ({"type": "All", "maxRuns": 100, "window": "PT1H"}, minutes(*range(11)), LedgerReason.SKIPPED_BY_POLICY),
    ],
)
def test_each_policy_runs_its_share_and_names_the_rest(policy, runs, reason) -> None:
    record = job(policy)
    step = jobstate.dispatch_step(record, T0, NOW)
    assert step.queued == runs
    assert step.following == T0 + 11 * MIN  # on to the first occurrence after now, whatever the policy
    entries = jobstate.let_go(record, step, NOW)
    named = {e.occurrence for e in entries}
    assert named | set(runs) == set(minutes(*range(11))) and not named & set(runs)
    assert all(e.reason == reason for e in entries)
    assert all(
        e.status == (JobExecutionStatus.POSTPONED if reason == LedgerReason.POSTPONED else JobExecutionStatus.SKIPPED)
        for e in entries
    )
    assert [e.occurrence for e in entries] == sorted(named, reverse=True)  # newest first
    advanced = jobstate.advanced(record, step)
    assert advanced.state == JobState.ENABLED and advanced.next_execution_time == T0 + 11 * MIN
    note = jobstate.postponed_note(record, step, NOW)  # the one entry 2016-03-01 history shows
    assert (note is None) == (len(entries) == 0)


def test_catch_up_runs_are_queued_one_second_apart_in_order() -> None:
    step = jobstate.dispatch_step(job({"type": "All", "maxRuns": 3}), T0, NOW)
    assert [step.due_of(o, NOW) for o in step.queued] == [NOW, NOW + timedelta(seconds=1), NOW + timedelta(seconds=2)]
    latest = jobstate.dispatch_step(job(), T0, NOW)
    assert [latest.due_of(o, NOW) for o in latest.queued] == list(minutes(10))  # Latest: at its own instant


def test_late_is_not_missed() -> None:
    step = jobstate.dispatch_step(job({"type": "Skip"}), T0, T0 + 2 * MIN)
    assert step.queued == (T0,) and step.catch_up is None


def test_a_year_of_missed_minutes_neither_stalls_nor_disables_the_job() -> None:
    record = job({"type": "All", "maxRuns": 100, "window": "P60D"})
    later = NOW + timedelta(days=365)
    began = time.monotonic()
    step = jobstate.dispatch_step(record, T0, later, ledger_limit=1000)
    entries = jobstate.let_go(record, step, later)
    assert time.monotonic() - began < 10  # bounded by maxRuns and the ledger limit, not by 525,600 misses
    assert len(step.queued) == 100 and len(entries) == 1000
    assert step.catch_up is not None and step.catch_up.let_go_count > 500_000
    advanced = jobstate.advanced(record, step)
    assert advanced.state == JobState.ENABLED and advanced.next_execution_time == later.replace(second=0) + MIN


def test_a_series_that_ended_among_skipped_occurrences_completes_the_job() -> None:
    record = job({"type": "Skip"}, frequency="Minute", count=5)  # T0 .. T0 + 4 min, all missed
    step = jobstate.dispatch_step(record, T0, NOW)
    assert step.queued == () and step.following is None
    assert jobstate.advanced(record, step).state == JobState.COMPLETED
    latest = jobstate.dispatch_step(replace(record, properties=job(frequency="Minute", count=5).properties), T0, NOW)
    assert latest.queued == minutes(4)  # under Latest the last one runs, and its attempt completes the job
    assert jobstate.advanced(record, latest).state == JobState.ENABLED


def test_a_disabled_job_catches_up_nothing() -> None:
    step = jobstate.dispatch_step(job({"type": "All"}, JobState.DISABLED), T0, NOW)
    assert step.queued == () and step.catch_up is None and jobstate.let_go(job(), step, NOW) == []
