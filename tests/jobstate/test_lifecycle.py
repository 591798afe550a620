"""The whole life of a job, row by row, without storage: written, dispatched, attempted, shown, expired.

Every function of shared/jobstate is pure and returns a new record, so these tables need no Azurite, no
clock and no queue; the storage-backed tests check the shells that call them.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared import jobstate
from shared.jobstate import Attempt, AttemptOutcome, Outcome, StateRefused
from shared.keys import JobKey
from shared.model import JobCollectionState, JobExecutionStatus, JobHistoryActionName, JobProperties, JobState
from shared.records import JobRecord

NOW = datetime(2026, 3, 4, 10, 20, 30, tzinfo=UTC)
MIN = timedelta(minutes=1)
ACTION = {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}
EVERY_MINUTE = {"frequency": "Minute", "interval": 1}
DONE = AttemptOutcome(Outcome.SUCCEEDED)
FAULTED = AttemptOutcome(Outcome.FAULTED, faults_occurrence=True, faults_job=True)
RETRY = AttemptOutcome(Outcome.RETRY, delay=timedelta(seconds=30))


def job(state: JobState = JobState.ENABLED, start: datetime = NOW, **recurrence: object) -> JobRecord:
    properties = JobProperties.model_validate(
        {"action": ACTION, "startTime": start.isoformat(), **({"recurrence": recurrence} if recurrence else {})}
    )
    return JobRecord(
        JobKey("s", "g", "c", "j"),
        properties,
        state=state,
        created_time=NOW,
        count_origin=max(start, NOW),
        generation=7,
    )


# -- written ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "state", "next_time"),
    [
        (job(), JobState.ENABLED, NOW),  # a one-shot due now
        (job(start=NOW + MIN), JobState.ENABLED, NOW + MIN),
        (job(start=NOW - timedelta(days=1)), JobState.ENABLED, NOW),  # a past one-shot runs at once
        (job(start=NOW - timedelta(minutes=90), frequency="Hour"), JobState.ENABLED, NOW + timedelta(minutes=30)),
        (job(start=NOW - 90 * MIN, frequency="Minute", endTime=(NOW - MIN).isoformat()), JobState.COMPLETED, None),
        (job(JobState.DISABLED), JobState.DISABLED, None),
        (job(JobState.FAULTED), JobState.FAULTED, None),
    ],
)
def test_a_written_job_is_planned_at_its_first_occurrence_or_finished(record, state, next_time) -> None:
    stored = replace(record, next_execution_time=NOW - MIN, dispatched_occurrence=NOW - MIN)
    result = jobstate.planned(stored, NOW)
    assert (result.state, result.next_execution_time, result.dispatched_occurrence) == (state, next_time, None)
    assert stored.next_execution_time == NOW - MIN  # the input is untouched: a new record came back


def test_a_created_job_starts_counting_from_its_start_or_now() -> None:
    created = jobstate.written(
        JobKey("s", "g", "c", "j"), job(start=NOW + MIN).properties, JobState.ENABLED, None, NOW, NOW + MIN
    )
    assert (created.created_time, created.count_origin, created.execution_count) == (NOW, NOW + MIN, 0)
    past = jobstate.written(created.key, job(start=NOW - MIN).properties, JobState.ENABLED, None, NOW, NOW - MIN)
    assert past.anchor is None  # it has a startTime
    unanchored = job(start=NOW).properties.model_copy(update={"start_time": None})
    anchored = jobstate.written(created.key, unanchored, JobState.ENABLED, None, NOW, NOW)
    assert anchored.anchor == NOW and jobstate.start_of(anchored) == NOW
    assert past.count_origin == NOW


@pytest.mark.parametrize(
    ("change", "keeps_origin"),
    [
        ({}, True),  # the same schedule: a PATCH of the action does not restart `count`
        ({"start_time": NOW + 2 * MIN}, False),
    ],
)
def test_a_rewrite_keeps_identity_and_counters(change, keeps_origin) -> None:
    existing = replace(
        job(start=NOW - MIN, **EVERY_MINUTE),
        count_origin=NOW - MIN,
        execution_count=5,
        failure_count=2,
        faulted_count=1,
        etag="e1",
        created_time=NOW - timedelta(days=1),
    )
    properties = existing.properties.model_copy(update=change)
    later = NOW + timedelta(hours=1)
    start = properties.start_time
    assert start is not None
    rewritten = jobstate.written(existing.key, properties, JobState.DISABLED, existing, later, start)
    assert (rewritten.execution_count, rewritten.failure_count, rewritten.faulted_count) == (5, 2, 1)
    assert (rewritten.etag, rewritten.created_time, rewritten.state) == ("e1", existing.created_time, JobState.DISABLED)
    assert rewritten.generation > existing.generation
    assert (rewritten.count_origin == existing.count_origin) is keeps_origin


@pytest.mark.parametrize(
    ("requested", "existing", "default", "expected"),
    [
        (None, None, JobState.ENABLED, JobState.ENABLED),
        (JobState.DISABLED, None, JobState.ENABLED, JobState.DISABLED),
        (None, job(JobState.DISABLED), JobState.DISABLED, JobState.DISABLED),
        (JobState.ENABLED, job(JobState.DISABLED), JobState.DISABLED, JobState.ENABLED),
        (None, job(JobState.COMPLETED), JobState.ENABLED, JobState.COMPLETED),  # a final state stays
        (JobState.FAULTED, job(JobState.FAULTED), JobState.ENABLED, JobState.FAULTED),
    ],
)
def test_the_state_a_write_leaves(requested, existing, default, expected) -> None:
    assert jobstate.resolve_state(requested, existing, default) == expected


@pytest.mark.parametrize(
    ("requested", "existing", "final"),
    [
        (JobState.ENABLED, job(JobState.COMPLETED), True),
        (JobState.DISABLED, job(JobState.FAULTED), True),
        (JobState.COMPLETED, job(), False),
        (JobState.FAULTED, None, False),
    ],
)
def test_states_a_write_cannot_set(requested, existing, final) -> None:
    with pytest.raises(StateRefused) as refused:
        jobstate.resolve_state(requested, existing, JobState.ENABLED)
    assert refused.value.final is final


def test_a_rewrite_gets_a_newer_generation_even_after_a_delete_and_re_create() -> None:
    assert jobstate.new_generation(job(), NOW) > job().generation
    assert jobstate.new_generation(replace(job(), generation=10**15), NOW) == 10**15 + 1
    assert jobstate.new_generation(None, NOW) == int(NOW.timestamp() * 1000)


@pytest.mark.parametrize(
    ("collection", "before", "after"),
    [
        (JobCollectionState.DISABLED, JobState.ENABLED, JobState.DISABLED),
        (JobCollectionState.ENABLED, JobState.DISABLED, JobState.ENABLED),
    ],
)
def test_a_collection_state_moves_its_jobs(collection, before, after) -> None:
    from_state, to_state = jobstate.COLLECTION_CASCADE[collection]
    assert (from_state, to_state) == (before, after)
    moved = jobstate.moved(job(before), from_state, to_state, NOW)
    assert moved is not None and moved.state == after and moved.generation > job().generation
    assert jobstate.moved(job(JobState.COMPLETED), from_state, to_state, NOW) is None  # a final job stays
    assert JobCollectionState.SUSPENDED not in jobstate.COLLECTION_CASCADE  # suspended: the executor gates


# -- dispatched --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "due", "now", "occurrence", "following", "runs", "missed_from"),
    [
        (job(**EVERY_MINUTE), NOW, NOW - MIN, NOW, NOW + MIN, True, None),
        (job(**EVERY_MINUTE), NOW, NOW + 2 * MIN, NOW, NOW + MIN, True, None),  # late, not missed
        (job(**EVERY_MINUTE), NOW, NOW + 10 * MIN, NOW + 10 * MIN, NOW + 11 * MIN, True, NOW),  # missed: the latest
        (job(JobState.DISABLED, **EVERY_MINUTE), NOW, NOW + 10 * MIN, NOW, NOW + MIN, False, None),
        (job(), NOW, NOW + 10 * MIN, NOW, None, True, None),  # a one-shot runs late rather than never
    ],
)
def test_the_dispatcher_queues_an_occurrence_and_moves_on(
    record, due, now, occurrence, following, runs, missed_from
) -> None:
    step = jobstate.dispatch_step(record, due, now)
    assert (step.occurrence, step.following, step.runs, step.missed_from) == (occurrence, following, runs, missed_from)
    advanced = jobstate.advanced(replace(record, next_execution_time=due), step)
    assert (advanced.next_execution_time, advanced.dispatched_occurrence) == (following, occurrence)
    assert jobstate.has_advanced(advanced, record.generation, step)
    assert not jobstate.still_due(advanced, record.generation, due) or following == due


def test_a_missed_run_leaves_a_postponed_note_naming_what_was_skipped() -> None:
    record = job(**EVERY_MINUTE)
    step = jobstate.dispatch_step(record, NOW, NOW + 10 * MIN)
    note = jobstate.postponed_note(record, step, NOW + 10 * MIN)
    assert note is not None and note.status == JobExecutionStatus.POSTPONED
    assert note.expected_execution_time == NOW and note.repeat_count == 1
    assert note.message.startswith("10 occurrence(s) from")
    assert jobstate.postponed_note(record, jobstate.dispatch_step(record, NOW, NOW), NOW) is None


def test_the_occurrences_an_outage_skipped_are_counted() -> None:
    record = job(**EVERY_MINUTE)
    assert jobstate.missed_count(record, jobstate.dispatch_step(record, NOW, NOW + 10 * MIN)) == 10
    assert jobstate.missed_count(record, jobstate.dispatch_step(record, NOW, NOW + MIN)) == 0  # late, not missed


def test_a_rewritten_job_is_no_longer_due_for_an_old_dispatch() -> None:
    record = replace(job(**EVERY_MINUTE), next_execution_time=NOW)
    assert jobstate.still_due(record, record.generation, NOW)
    assert not jobstate.still_due(replace(record, generation=8), 7, NOW)
    assert not jobstate.still_due(replace(record, next_execution_time=NOW + MIN), 7, NOW)


# -- attempted ---------------------------------------------------------------------------------------------------

SCHEDULED, RUN_NOW = Attempt("c1", NOW, True), Attempt("c1", NOW, False)
RETRY_1 = Attempt("c1", NOW, True, retry=1)
ERROR_ACTION = Attempt("c1", NOW, True, JobHistoryActionName.ERROR_ACTION)


@pytest.mark.parametrize(
    ("state", "attempt", "runs"),
    [
        (JobState.ENABLED, SCHEDULED, True),
        (JobState.DISABLED, SCHEDULED, False),
        (JobState.DISABLED, RUN_NOW, True),
        (JobState.COMPLETED, SCHEDULED, False),
        (JobState.COMPLETED, RUN_NOW, False),
        (JobState.COMPLETED, RETRY_1, True),  # a retry finishes its occurrence whatever came after
        (JobState.FAULTED, ERROR_ACTION, True),
        (JobState.DISABLED, RETRY_1, False),  # disabling a job stops its retries
    ],
)
def test_may_an_attempt_run(state, attempt, runs) -> None:
    assert jobstate.may_run(job(state), attempt) is runs


@pytest.mark.parametrize(
    ("record", "attempt", "outcome", "succeeded", "counts", "state"),
    [
        # counts: executions, failures, faults
        (job(**EVERY_MINUTE), SCHEDULED, DONE, True, (1, 0, 0), JobState.ENABLED),
        (job(**EVERY_MINUTE), SCHEDULED, FAULTED, False, (1, 1, 1), JobState.ENABLED),
        (job(), SCHEDULED, DONE, True, (1, 0, 0), JobState.COMPLETED),  # the last occurrence ends
        (job(), SCHEDULED, FAULTED, False, (1, 1, 1), JobState.FAULTED),
        (job(), SCHEDULED, RETRY, False, (1, 1, 0), JobState.ENABLED),  # a retry follows: not ended yet
        (job(), RUN_NOW, DONE, True, (1, 0, 0), JobState.ENABLED),  # run-now never ends the schedule
        (job(JobState.DISABLED), RUN_NOW, FAULTED, False, (1, 1, 1), JobState.DISABLED),
    ],
)
def test_the_job_after_an_attempt(record, attempt, outcome, succeeded, counts, state) -> None:
    after = jobstate.after_attempt(record, attempt, outcome, NOW, succeeded)
    assert after is not None
    assert (after.execution_count, after.failure_count, after.faulted_count) == counts
    assert after.state == state and after.last_execution_time == NOW and after.recent_claims == ("c1",)
    assert jobstate.is_done(after, "c1")
    assert jobstate.after_attempt(after, attempt, outcome, NOW, succeeded) is None  # counted once


@pytest.mark.parametrize(
    ("attempt", "outcome", "succeeded", "last_success"),
    [
        (SCHEDULED, DONE, True, NOW),
        (RUN_NOW, DONE, True, NOW),  # run-now is a success of the job too
        (SCHEDULED, FAULTED, False, NOW - MIN),  # a failure keeps the last success
        (ERROR_ACTION, DONE, True, NOW - MIN),  # the error action succeeding is not the job succeeding
    ],
)
def test_the_last_success_is_what_an_expectation_counts_from(attempt, outcome, succeeded, last_success) -> None:
    record = replace(job(**EVERY_MINUTE), last_success_time=NOW - MIN)
    after = jobstate.after_attempt(record, attempt, outcome, NOW, succeeded)
    assert after is not None and after.last_success_time == last_success


def test_a_rewrite_keeps_the_last_success() -> None:
    existing = replace(job(**EVERY_MINUTE), last_success_time=NOW - MIN)
    rewritten = jobstate.written(existing.key, existing.properties, JobState.ENABLED, existing, NOW, NOW)
    assert rewritten.last_success_time == NOW - MIN


def test_a_job_remembers_its_latest_attempts_only() -> None:
    record = job(**EVERY_MINUTE)
    for i in range(jobstate.RECENT_CLAIMS + 5):
        after = jobstate.after_attempt(record, Attempt(f"c{i}", NOW, True), DONE, NOW, True)
        assert after is not None
        record = after
    assert len(record.recent_claims) == jobstate.RECENT_CLAIMS and not jobstate.is_done(record, "c0")


# -- shown and expired -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "now", "next_time"),
    [
        (replace(job(**EVERY_MINUTE), next_execution_time=NOW + MIN, dispatched_occurrence=NOW), NOW - MIN, NOW),
        (
            replace(job(**EVERY_MINUTE), next_execution_time=NOW + MIN, dispatched_occurrence=NOW),
            NOW + timedelta(seconds=1),
            NOW + MIN,
        ),  # once its instant passed, a recurring job shows the following one
        (replace(job(), next_execution_time=None, dispatched_occurrence=NOW), NOW + MIN, NOW),  # a pending one-shot
        (replace(job(), next_execution_time=None, dispatched_occurrence=NOW, last_execution_time=NOW), NOW + MIN, None),
    ],
)
def test_the_next_execution_shown(record, now, next_time) -> None:
    status = jobstate.status(record, now)
    assert status is not None and status.next_execution_time == next_time


def test_a_disabled_job_shows_no_status() -> None:
    assert jobstate.status(job(JobState.DISABLED), NOW) is None


@pytest.mark.parametrize(
    ("state", "ended", "gone"),
    [
        (JobState.COMPLETED, NOW - jobstate.FINISHED_JOB_AGE, True),
        (JobState.FAULTED, NOW - jobstate.FINISHED_JOB_AGE + timedelta(seconds=1), False),
        (JobState.ENABLED, NOW - timedelta(days=365), False),
        (JobState.DISABLED, NOW - timedelta(days=365), False),
    ],
)
def test_a_finished_job_expires(state, ended, gone) -> None:
    assert jobstate.expired(replace(job(state), last_execution_time=ended), NOW) is gone


def test_a_job_series_is_built_once_per_record_and_kept_through_its_changes() -> None:
    record = job(**EVERY_MINUTE)
    series = jobstate.series_of(record)
    assert jobstate.series_of(record) is series
    planned = jobstate.planned(record, NOW)
    step = jobstate.dispatch_step(planned, NOW, NOW)
    advanced = jobstate.advanced(planned, step)
    after = jobstate.after_attempt(advanced, SCHEDULED, DONE, NOW, True)
    assert after is not None and jobstate.series_of(after) is series


def test_a_stored_record_keeps_its_series() -> None:
    from shared.records import with_etag

    record = job(**EVERY_MINUTE)
    series = jobstate.series_of(record)
    assert jobstate.series_of(with_etag(record, "e2")) is series
