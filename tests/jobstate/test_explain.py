"""Explain (jobstate/explain.py), without storage: one row per ledger reason (its entry built by hand) and per rule
that decides an instant without one, each with its verdict, reason and the key words of its message; the table
covers every LedgerReason."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared import jobstate
from shared.jobstate import Verdict
from shared.keys import JobKey
from shared.model import JobCollectionState, JobExecutionStatus, JobProperties, JobState, LedgerReason, WaitCause
from shared.records import JobRecord, LedgerEntry

NOW = datetime(2026, 12, 1, 8, 30, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
SECOND = timedelta(seconds=1)
CREATED = NOW - 12 * HOUR  # 2026-11-30T20:30Z: the hourly series starts a day before NOW, at 08:00
PAST = NOW.replace(minute=0) - HOUR  # 07:00, passed by the dispatcher
SKIPPED, MOVED, MOVED_TO, EXTRA = NOW + 3.5 * HOUR, NOW + 4.5 * HOUR, NOW + 5 * HOUR, NOW + 6.75 * HOUR
UNTIL = NOW + 5 * HOUR  # 13:30: the pause holds 09:00 .. 13:00
KEY = JobKey("s", "g", "c", "j")
WAITED = NOW - 40 * SECOND


def stamp(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def job(*, pause: bool = False, exceptions: bool = False, once: bool = False, **properties: Any) -> JobRecord:
    """An hourly job from NOW - 24 h, created at CREATED and planned at NOW (next: 09:00), optionally with a
    skip (12:00), a move (13:00 -> 13:30) and an extra run (15:15), or a pause until 13:30."""
    document: dict[str, Any] = {
        "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
        "startTime": stamp(NOW.replace(minute=0) - 24 * HOUR),
        **({} if once else {"recurrence": {"frequency": "Hour"}}),
        **properties,
    }
    if exceptions:
        document["exceptions"] = [
            {"type": "Skip", "occurrence": stamp(SKIPPED), "note": "holiday"},
            {"type": "Move", "occurrence": stamp(MOVED), "moveTo": stamp(MOVED_TO)},
            {"type": "Add", "occurrence": stamp(EXTRA), "note": "month end"},
        ]
    if pause:
        document["pause"] = {"until": stamp(UNTIL), "note": "migration"}
    record = JobRecord(KEY, JobProperties.model_validate(document), created_time=CREATED, count_origin=CREATED)
    return jobstate.planned(record, NOW)


def entry(
    at: datetime,
    status: JobExecutionStatus,
    reason: LedgerReason | None = None,
    message: str = "",
    trigger: str = "schedule",
    attempts: int = 1,
    **more: Any,
) -> LedgerEntry:
    return LedgerEntry(
        key=KEY,
        execution_id=f"{stamp(at)}|{trigger}",
        occurrence=at,
        trigger=trigger,
        status=status,
        message=message,
        reason=reason,
        start_time=more.pop("start_time", at + 2 * SECOND),
        end_time=at + 3 * SECOND,
        attempts=attempts,
        retry_count=attempts - 1,
        **more,
    )


def skipped(reason: LedgerReason, message: str, at: datetime = PAST) -> list[LedgerEntry]:
    return [entry(at, JobExecutionStatus.SKIPPED, reason, message, attempts=0)]


def waiting(reason: LedgerReason) -> list[LedgerEntry]:
    return [entry(NOW - HOUR / 2, JobExecutionStatus.WAITING, reason, "Waiting for ...", attempts=0, start_time=WAITED)]


@dataclass(frozen=True)
class Row:
    name: str
    instant: datetime
    verdict: Verdict
    reason: str
    says: str  # a key part of the message
    entries: list[LedgerEntry] = field(default_factory=list)
    job: JobRecord = field(default_factory=job)
    collection: JobCollectionState = JobCollectionState.ENABLED
    now: datetime = NOW
    covers: LedgerReason | None = None  # the ledger reason the row's entry carries
    facts: dict[str, Any] = field(default_factory=dict)  # further members of the Explanation


DISABLED = replace(job(), state=JobState.DISABLED, next_execution_time=None, paused_since=NOW - 2 * HOUR)
BEHIND = replace(job(), next_execution_time=NOW - 3.5 * HOUR)  # due at 05:00: the dispatcher was held back
MISSED = "Missed while the scheduler could not run it; "

ROWS = [
    # -- one row per ledger reason: the scheduled trigger's entry is what happened
    Row(
        "skipped by policy",
        PAST,
        Verdict.SKIPPED,
        "SkippedByPolicy",
        "Skipped: missed while the scheduler could not run it; skipped by the missed-run policy Skip.",
        skipped(LedgerReason.SKIPPED_BY_POLICY, MISSED + "skipped by the missed-run policy Skip."),
        covers=LedgerReason.SKIPPED_BY_POLICY,
        facts={"status": JobExecutionStatus.SKIPPED, "is_occurrence": True, "nominal": True},
    ),
    Row(
        "postponed",
        PAST,
        Verdict.POSTPONED,
        "Postponed",
        f"Postponed: missed while the scheduler could not run it; the Latest missed-run policy ran the latest "
        f"missed occurrence, {stamp(PAST + HOUR)}, in its place.",
        [
            entry(
                PAST,
                JobExecutionStatus.POSTPONED,
                LedgerReason.POSTPONED,
                MISSED + f"the Latest missed-run policy ran the latest missed occurrence, {stamp(PAST + HOUR)}, in "
                "its place.",
                attempts=0,
            )
        ],
        covers=LedgerReason.POSTPONED,
    ),
    Row(
        "job disabled",
        PAST,
        Verdict.SKIPPED,
        "JobDisabled",
        "Skipped: the job was Disabled.",
        skipped(LedgerReason.JOB_DISABLED, "Not run: the job was Disabled."),
        covers=LedgerReason.JOB_DISABLED,
    ),
    Row(
        "collection disabled",
        PAST,
        Verdict.SKIPPED,
        "CollectionDisabled",
        "Skipped: its job collection was Disabled.",
        skipped(LedgerReason.COLLECTION_DISABLED, "Not run: its job collection was Disabled."),
        covers=LedgerReason.COLLECTION_DISABLED,
    ),
    Row(
        "collection suspended",
        PAST,
        Verdict.SKIPPED,
        "CollectionSuspended",
        "Skipped: its job collection was Suspended.",
        skipped(LedgerReason.COLLECTION_SUSPENDED, "Not run: its job collection was Suspended."),
        covers=LedgerReason.COLLECTION_SUSPENDED,
    ),
    Row(
        "quota",
        PAST,
        Verdict.SKIPPED,
        "Quota",
        "Skipped: its job collection's plan did not allow it.",
        skipped(LedgerReason.QUOTA, ""),  # no message of its own: the reason's words
        covers=LedgerReason.QUOTA,
    ),
    Row(
        "job changed",
        PAST,
        Verdict.SKIPPED,
        "JobChanged",
        "Skipped: the job was changed (PUT or PATCH) after it was queued",
        skipped(
            LedgerReason.JOB_CHANGED,
            "Not run: the job was changed (PUT or PATCH) after it was queued, and the new definition does not run it.",
        ),
        covers=LedgerReason.JOB_CHANGED,
    ),
    Row(
        "skipped by overlap",
        PAST,
        Verdict.SKIPPED,
        "SkippedByOverlap",
        f"Skipped: the occurrence of {stamp(PAST - HOUR)} was still running (overlapPolicy Skip).",
        skipped(
            LedgerReason.SKIPPED_BY_OVERLAP,
            f"Not run: the occurrence of {stamp(PAST - HOUR)} was still running (overlapPolicy Skip).",
        ),
        covers=LedgerReason.SKIPPED_BY_OVERLAP,
    ),
    Row(
        "waiting for the previous",
        NOW - HOUR / 2,
        Verdict.WAITING,
        "WaitingForPrevious",
        f"Waiting since {stamp(WAITED)} for the previous occurrence to end (overlapPolicy BufferOne).",
        waiting(LedgerReason.WAITING_FOR_PREVIOUS),
        covers=LedgerReason.WAITING_FOR_PREVIOUS,
        facts={"waited": 40 * SECOND, "waited_for": WaitCause.PREVIOUS},
    ),
    Row(
        "waiting for concurrency",
        NOW - HOUR / 2,
        Verdict.WAITING,
        "WaitingForConcurrency",
        "for a slot of maxConcurrentExecutions.",
        waiting(LedgerReason.WAITING_FOR_CONCURRENCY),
        covers=LedgerReason.WAITING_FOR_CONCURRENCY,
        facts={"waited_for": WaitCause.CONCURRENCY, "status": JobExecutionStatus.WAITING},
    ),
    Row(
        "waiting for the rate limit",
        NOW - HOUR / 2,
        Verdict.WAITING,
        "WaitingForRateLimit",
        "for its turn under the target host's requestsPerSecond.",
        waiting(LedgerReason.WAITING_FOR_RATE_LIMIT),
        covers=LedgerReason.WAITING_FOR_RATE_LIMIT,
        facts={"waited_for": WaitCause.RATE_LIMIT},
    ),
    Row(
        "deferred by its destination",
        NOW - HOUR / 2,
        Verdict.WAITING,
        "Deferred",
        "for its destination to take requests again (it pushed back, or its circuit is open).",
        waiting(LedgerReason.DEFERRED),
        covers=LedgerReason.DEFERRED,
        facts={"waited_for": WaitCause.DESTINATION},
    ),
    Row(
        "excepted",
        PAST,
        Verdict.SKIPPED,
        "Excepted",
        "Skipped by an exception of the job (holiday).",
        skipped(LedgerReason.EXCEPTED, "Not run: skipped by an exception of the job (holiday)."),
        covers=LedgerReason.EXCEPTED,
    ),
    Row(
        "moved away",
        PAST,
        Verdict.SKIPPED,
        "Moved",
        f"Skipped: moved to {stamp(PAST + HOUR / 2)} by an exception of the job.",
        skipped(LedgerReason.MOVED, f"Not run: moved to {stamp(PAST + HOUR / 2)} by an exception of the job."),
        covers=LedgerReason.MOVED,
    ),
    Row(
        "extra, ran",
        EXTRA,
        Verdict.RAN,
        "Extra",
        f"Ran at {stamp(EXTRA + 2 * SECOND)} after 1 attempt (an extra run, added by an exception, month end).",
        [entry(EXTRA, JobExecutionStatus.COMPLETED, LedgerReason.EXTRA)],
        job(exceptions=True),
        now=EXTRA + HOUR,
        covers=LedgerReason.EXTRA,
        facts={"is_occurrence": True, "nominal": False, "attempts": 1},
    ),
    Row(
        "paused",
        PAST,
        Verdict.SKIPPED,
        "Paused",
        f"Skipped: the job was paused until {stamp(UNTIL)}: migration.",
        skipped(LedgerReason.PAUSED, f"Not run: the job was paused until {stamp(UNTIL)}: migration."),
        job(pause=True),
        covers=LedgerReason.PAUSED,
        facts={"pause": job(pause=True).properties.pause},
    ),
    # -- what ran, and who else ran at the instant
    Row(
        "ran after retries",
        PAST,
        Verdict.RAN,
        "Schedule",
        f"Ran at {stamp(PAST + 2 * SECOND)} after 2 attempts.",
        [entry(PAST, JobExecutionStatus.COMPLETED, attempts=2)],
        facts={"attempts": 2, "status": JobExecutionStatus.COMPLETED},
    ),
    Row(
        "ran after a wait",
        PAST,
        Verdict.RAN,
        "Schedule",
        "Waited 12 s for a slot of maxConcurrentExecutions, then ran at",
        [entry(PAST, JobExecutionStatus.COMPLETED, waited=12 * SECOND, waited_for=WaitCause.CONCURRENCY)],
        facts={"waited": 12 * SECOND, "waited_for": WaitCause.CONCURRENCY},
    ),
    Row(
        "moved here, ran",
        MOVED_TO,
        Verdict.RAN,
        "Moved",
        f"(moved here from {stamp(MOVED)} by an exception).",
        [entry(MOVED_TO, JobExecutionStatus.COMPLETED)],  # the recorder's entry, without a reason
        job(exceptions=True),
        now=MOVED_TO + HOUR,
    ),
    Row(
        "failed",
        PAST,
        Verdict.FAILED,
        "Schedule",
        "Failed after 5 attempts",
        [entry(PAST, JobExecutionStatus.FAILED, attempts=5)],
    ),
    Row(
        "running",
        PAST,
        Verdict.RUNNING,
        "Schedule",
        f"Running since {stamp(PAST + 2 * SECOND)} (attempt 1).",
        [entry(PAST, JobExecutionStatus.RUNNING)],
    ),
    Row(
        "a run-now beside it",
        PAST,
        Verdict.RAN,
        "Schedule",
        "; also run by hand at this instant, as occurrences of their own: run-now Failed.",
        [entry(PAST, JobExecutionStatus.FAILED, trigger="run"), entry(PAST, JobExecutionStatus.COMPLETED)],
        facts={"status": JobExecutionStatus.COMPLETED},
    ),
    Row(
        "a run-now at no occurrence",
        PAST + HOUR / 4,
        Verdict.NOT_AN_OCCURRENCE,
        "Schedule",
        "also run by hand at this instant, as occurrences of their own: run-now Completed.",
        [entry(PAST + HOUR / 4, JobExecutionStatus.COMPLETED, trigger="run")],
        facts={"nearest": (PAST, PAST + HOUR), "attempts": None},
    ),
    # -- no ledger entry: the rule in force decides
    Row(
        "future, plain",
        NOW + 1.5 * HOUR,
        Verdict.WILL_RUN,
        "Schedule",
        f"Will run at {stamp(NOW + 1.5 * HOUR)}.",
        facts={"fire_time": NOW + 1.5 * HOUR, "is_occurrence": True, "nominal": True},
    ),
    Row(
        "future, spread",
        NOW + 1.5 * HOUR,
        Verdict.WILL_RUN,
        "Schedule",
        f"Will run at {stamp(NOW + 1.5 * HOUR + 8 * SECOND)} (8 s after its instant: spreadWindow).",
        job=job(spreadWindow="PT1M"),
        facts={"fire_time": NOW + 1.5 * HOUR + 8 * SECOND},
    ),
    Row(
        "future, excepted",
        SKIPPED,
        Verdict.WILL_NOT_RUN,
        "Excepted",
        "Will not run: skipped by an exception of the job (holiday).",
        job=job(exceptions=True),
        facts={"is_occurrence": False, "nominal": True, "fire_time": None},
    ),
    Row(
        "future, moved away",
        MOVED,
        Verdict.WILL_NOT_RUN,
        "Moved",
        f"Will not run: moved to {stamp(MOVED_TO)} by an exception of the job.",
        job=job(exceptions=True),
    ),
    Row(
        "future, moved here",
        MOVED_TO,
        Verdict.WILL_RUN,
        "Moved",
        f"Will run at {stamp(MOVED_TO)} (moved here from {stamp(MOVED)} by an exception).",
        job=job(exceptions=True),
        facts={"is_occurrence": True, "nominal": False, "fire_time": MOVED_TO},
    ),
    Row(
        "future, added",
        EXTRA,
        Verdict.WILL_RUN,
        "Extra",
        "(an extra run, added by an exception, month end).",
        job=job(exceptions=True),
    ),
    Row(
        "past, excepted, no entry",
        SKIPPED,
        Verdict.SKIPPED,
        "Excepted",
        "Skipped by an exception of the job (holiday).",
        # the dispatcher went past it: 11:00 queued, the move's 13:30 next
        job=replace(job(exceptions=True), dispatched_occurrence=SKIPPED - HOUR, next_execution_time=MOVED_TO),
        now=SKIPPED + HOUR / 4,
    ),
    Row(
        "paused, let go at the resume",
        NOW + 1.5 * HOUR,
        Verdict.WILL_NOT_RUN,
        "Paused",
        f"Held by the job's pause until {stamp(UNTIL)} (migration); its resume lets it go (missed-run policy Latest).",
        job=job(pause=True),
        facts={"fire_time": None},
    ),
    Row(
        "paused, run at the resume",
        UNTIL - HOUR / 2,
        Verdict.WILL_RUN,
        "Paused",
        f"its resume runs it at {stamp(UNTIL)} (missed-run policy Latest).",
        job=job(pause=True),
        now=UNTIL - HOUR / 4,  # past its instant: the resume still decides
        facts={"fire_time": UNTIL},
    ),
    Row(
        "job disabled, ahead",
        NOW + 1.5 * HOUR,
        Verdict.WILL_NOT_RUN,
        "JobDisabled",
        "Will not run: the job is Disabled.",
        job=DISABLED,
    ),
    Row(
        "job disabled, passed",
        PAST,
        Verdict.SKIPPED,
        "JobDisabled",
        "the ledger names it when the job is enabled again.",
        job=DISABLED,
    ),
    Row(
        "job faulted",
        NOW + 1.5 * HOUR,
        Verdict.WILL_NOT_RUN,
        "JobFaulted",
        "Will not run: the job is Faulted.",
        job=replace(job(), state=JobState.FAULTED, next_execution_time=None),
    ),
    Row(
        "collection suspended, ahead",
        NOW + 1.5 * HOUR,
        Verdict.WILL_NOT_RUN,
        "CollectionSuspended",
        "Will not run: its job collection is Suspended.",
        collection=JobCollectionState.SUSPENDED,
    ),
    Row(
        "collection disabled, ahead",
        NOW + 1.5 * HOUR,
        Verdict.WILL_NOT_RUN,
        "CollectionDisabled",
        "Will not run: its job collection is Disabled.",
        collection=JobCollectionState.DISABLED,
    ),
    Row(
        "missed, let go",
        NOW - 2.5 * HOUR,
        Verdict.WILL_NOT_RUN,
        "Postponed",
        f"Missed; the missed-run policy Latest lets it go (the latest missed is {stamp(NOW - HOUR / 2)}).",
        job=BEHIND,
    ),
    Row(
        "missed, run",
        NOW - HOUR / 2,
        Verdict.WILL_RUN,
        "MissedRunPolicy",
        f"Missed; the missed-run policy Latest runs it at {stamp(NOW)}.",
        job=BEHIND,
        facts={"fire_time": NOW},
    ),
    Row(
        "late",
        NOW - HOUR / 2,
        Verdict.WILL_RUN,
        "Schedule",
        "Late; the next tick fires it.",
        job=replace(job(), next_execution_time=NOW - HOUR / 2),
        now=NOW - HOUR / 2 + 100 * SECOND,  # late by less than MISSED_AFTER: not missed
        facts={"fire_time": NOW - HOUR / 2 + 100 * SECOND},
    ),
    Row(
        "queued",
        NOW - HOUR / 2,
        Verdict.WILL_RUN,
        "Schedule",
        f"Queued at {stamp(NOW - HOUR / 2)}; it runs now.",
        job=replace(job(), dispatched_occurrence=NOW - HOUR / 2),
    ),
    Row(
        "not an occurrence",
        NOW + HOUR,
        Verdict.NOT_AN_OCCURRENCE,
        "Schedule",
        f"Not an occurrence: the nearest are {stamp(NOW + HOUR / 2)} and {stamp(NOW + 1.5 * HOUR)}.",
        facts={"nearest": (NOW + HOUR / 2, NOW + 1.5 * HOUR), "is_occurrence": False, "nominal": False},
    ),
    Row(
        "not an occurrence, beside a skip",
        SKIPPED + HOUR / 2,
        Verdict.NOT_AN_OCCURRENCE,
        "Schedule",
        f"the nearest are {stamp(SKIPPED - HOUR)} and {stamp(MOVED_TO)}.",  # 12:00 skipped, 13:00 moved to 13:30
        job=job(exceptions=True),
        facts={"nearest": (SKIPPED - HOUR, MOVED_TO)},
    ),
    Row(
        "a one-shot, not at its instant",
        NOW,
        Verdict.NOT_AN_OCCURRENCE,
        "Schedule",
        f"Not an occurrence: the job's last occurrence before it is {stamp(NOW.replace(minute=0) - 24 * HOUR)}, and "
        "none follows.",
        job=job(once=True),
    ),
    Row(
        "before the series starts",
        NOW.replace(minute=0) - 24.5 * HOUR,
        Verdict.NOT_AN_OCCURRENCE,
        "Schedule",
        f"Not an occurrence: the job's first occurrence is {stamp(NOW.replace(minute=0) - 24 * HOUR)}.",
        facts={"nearest": (NOW.replace(minute=0) - 24 * HOUR,)},
    ),
    Row(
        "past, no entry",
        PAST,
        Verdict.NO_RECORD,
        "Retention",
        "No record: the history retention has pruned its ledger entry.",
    ),
    Row(
        "past, before the job existed",
        CREATED - 1.5 * HOUR,
        Verdict.NO_RECORD,
        "BeforeCreation",
        f"No record: the job was created at {stamp(CREATED)}, after this occurrence.",
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_explain_names_the_verdict_the_rule_and_says_why(row: Row) -> None:
    found = jobstate.explain(row.job, row.instant, row.entries, row.collection, row.now)
    assert (found.verdict, found.reason) == (row.verdict, row.reason)
    assert row.says in found.message, found.message
    assert found.message[0].isupper() and found.message.endswith(".") and "\n" not in found.message
    assert found.occurrence == row.instant
    for name, value in row.facts.items():
        assert getattr(found, name) == value, name


def test_the_table_covers_every_ledger_reason() -> None:
    assert {row.covers for row in ROWS if row.covers is not None} == set(LedgerReason)


def test_an_exception_and_a_pause_are_handed_back_with_the_verdict_they_decide() -> None:
    excepted = jobstate.explain(job(exceptions=True), SKIPPED, [], JobCollectionState.ENABLED, NOW)
    assert excepted.exception is not None and excepted.exception.note == "holiday"
    held = jobstate.explain(job(pause=True), NOW + 1.5 * HOUR, [], JobCollectionState.ENABLED, NOW)
    assert held.pause is not None and held.pause.until == UNTIL and held.exception is None
    plain = jobstate.explain(job(), NOW + 1.5 * HOUR, [], JobCollectionState.ENABLED, NOW)
    assert (plain.exception, plain.pause, plain.nearest, plain.attempts) == (None, None, (), None)
