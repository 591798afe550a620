"""The ledger's entries for occurrences that did not run, and why: pure, like the rest of jobstate.

An occurrence that ran has its entry written with its attempt (store/ledger.py). One that did not gets an
entry from whoever let it go (docs/decisions.md, "Missed runs, backfill, the ledger"):
- the dispatcher, for missed occurrences its missed-run policy did not run (`let_go`: Postponed into the
  latest under Latest, SkippedByPolicy under Skip and All);
- the executor, for an occurrence it may not run when its second comes (`not_run`: the job or its collection
  Disabled, the collection Suspended) or that was queued for a definition since replaced (`superseded`,
  JobChanged, or JobDisabled when the replacement disabled the job), and for one queued before an outage that
  reached its second missed and its missed-run policy let go (`let_go_queued`, late.py: as `let_go` says it);
- the lifecycle, when a Disabled job is enabled again (`resumed`, `while_disabled`: the occurrences its series
  had while it was Disabled, JobDisabled or CollectionDisabled, the newest `limit` of them);
- the executor, for an occurrence its job's overlap policy skips (`skipped_by_overlap`, SkippedByOverlap), and for
  one that waits (`waiting`: status Waiting, reason WaitingForPrevious, WaitingForConcurrency or
  WaitingForRateLimit, from when it started waiting); its first attempt's entry replaces that one and says how
  long it waited and for what (`waited`, `waitedFor`: HistoryRecord.waited). A wait shorter than WAIT_SHOWN_AFTER
  gets no Waiting entry (a herd paced over seconds would double its writes), only the `waited` of its attempt.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from ..model import (
    JobExecutionStatus,
    JobState,
    LedgerReason,
    MissedRunType,
    OverlapPolicy,
    WaitCause,
    format_duration,
    format_utc,
)
from ..model.extensions import RETENTION_MAX_ENTRIES
from ..occurrence import Trigger, execution_id
from ..records import JobRecord, LedgerEntry, OccurrenceRef
from . import pause
from .late import LetGo
from .plan import DispatchStep
from .series import series_of

_WHY = {
    LedgerReason.JOB_DISABLED: "the job was Disabled",
    LedgerReason.COLLECTION_DISABLED: "its job collection was Disabled",
    LedgerReason.COLLECTION_SUSPENDED: "its job collection was Suspended",
    LedgerReason.JOB_CHANGED: "the job was changed (PUT or PATCH) after it was queued, and the new definition "
    "does not run it",
    LedgerReason.QUOTA: "its job collection's plan did not allow it",
    LedgerReason.PAUSED: "the job was paused",
}
# Waits shorter than this are shown only as the `waited` of the occurrence's attempt, not by a Waiting entry.
WAIT_SHOWN_AFTER = timedelta(seconds=5)
WAITING_REASON = {
    WaitCause.PREVIOUS: LedgerReason.WAITING_FOR_PREVIOUS,
    WaitCause.CONCURRENCY: LedgerReason.WAITING_FOR_CONCURRENCY,
    WaitCause.RATE_LIMIT: LedgerReason.WAITING_FOR_RATE_LIMIT,
    WaitCause.DESTINATION: LedgerReason.DEFERRED,
}
_WAITS_FOR = {
    WaitCause.PREVIOUS: "the previous occurrence of the job to end (overlapPolicy BufferOne)",
    WaitCause.CONCURRENCY: "a slot of its job collection's maxConcurrentExecutions",
    WaitCause.RATE_LIMIT: "its turn under its target host's requestsPerSecond (targetRateLimits)",
    WaitCause.DESTINATION: "its destination to take requests again (it answered 429 or 503, or its circuit is open)",
}


def entry(
    job: JobRecord, occurrence: datetime, trigger: Trigger, reason: LedgerReason, message: str, now: datetime
) -> LedgerEntry:
    status = JobExecutionStatus.SKIPPED
    if reason == LedgerReason.POSTPONED:
        status = JobExecutionStatus.POSTPONED
    elif reason in WAITING_REASON.values():
        status = JobExecutionStatus.WAITING
    repeat = series_of(job).repeat_count(occurrence) if trigger == Trigger.SCHEDULE else 0
    return LedgerEntry(
        key=job.key,
        execution_id=execution_id(job.key, occurrence, trigger),
        occurrence=occurrence,
        trigger=trigger.value,
        status=status,
        message=message,
        reason=reason,
        start_time=now,
        end_time=now,
        repeat_count=repeat,
    )


def let_go(job: JobRecord, step: DispatchStep, now: datetime) -> list[LedgerEntry]:
    """The entries of the missed occurrences a dispatch's catch-up did not run (newest first)."""
    caught = step.catch_up
    passed = excepted(job, step, now)
    if caught is None or not caught.let_go:
        return passed
    why = pause.why(job) if caught.reason == LedgerReason.PAUSED else _missed_why(job, caught.policy, caught.latest)
    return [entry(job, occurrence, Trigger.SCHEDULE, caught.reason, why, now) for occurrence in caught.let_go] + passed


def excepted(job: JobRecord, step: DispatchStep, now: datetime) -> list[LedgerEntry]:
    """The entries of the occurrences the job's exceptions took out (skipped, or moved away) that the step passes:
    those after the occurrence dispatched before it, up to the step's own (exceptions.py)."""
    series = series_of(job)
    found = []
    for occurrence in series.exceptions.excepted_between(job.dispatched_occurrence, step.occurrence):
        named = series.excepted(occurrence)
        if named is None:
            continue
        reason, exception = named
        note = f" ({exception.note})" if exception.note else ""
        why = (
            f"Not run: moved to {format_utc(exception.move_to)} by an exception of the job{note}."
            if exception.move_to is not None
            else f"Not run: skipped by an exception of the job{note}."
        )
        found.append(entry(job, occurrence, Trigger.SCHEDULE, reason, why, now))
    return found


def let_go_queued(job: JobRecord, occurrence: datetime, late: LetGo, now: datetime) -> LedgerEntry:
    """The entry of a queued occurrence that reached its second missed and its missed-run policy let go (late.py)."""
    return entry(job, occurrence, Trigger.SCHEDULE, late.reason, _missed_why(job, late.policy, late.latest), now)


def _missed_why(job: JobRecord, kind: MissedRunType, latest: datetime) -> str:
    """Why a missed occurrence did not run, naming the policy (and under Latest the occurrence run in its place)."""
    if kind == MissedRunType.LATEST:
        return (
            f"Missed while the scheduler could not run it; the Latest missed-run policy ran the latest missed "
            f"occurrence, {format_utc(latest)}, in its place."
        )
    if kind == MissedRunType.SKIP:
        return "Missed while the scheduler could not run it; skipped by the missed-run policy Skip."
    policy = job.properties.missed_run_policy
    assert policy is not None
    return (
        f"Missed while the scheduler could not run it; the missed-run policy All runs the latest "
        f"{policy.effective_max_runs} missed occurrences of the last {format_duration(policy.effective_window)} "
        f"and skipped this one."
    )


def not_run(job: JobRecord, occurrence: datetime, trigger: Trigger, reason: LedgerReason, now: datetime) -> LedgerEntry:
    """The entry of an occurrence the executor did not run when its second came."""
    return entry(job, occurrence, trigger, reason, f"Not run: {_WHY[reason]}.", now)


def superseded(job: JobRecord, occurrence: datetime, trigger: Trigger, now: datetime) -> LedgerEntry | None:
    """The entry of an occurrence queued for an earlier definition of `job` (its generation was replaced), or
    None when the job as it is now runs that occurrence itself (re-queued under the new generation). A run-now
    or backfilled occurrence is never queued again: it ends here, JobDisabled or JobChanged."""
    if job.state == JobState.ENABLED and trigger == Trigger.SCHEDULE:
        planned = job.dispatched_occurrence == occurrence or (
            job.next_execution_time is not None
            and job.next_execution_time <= occurrence
            and series_of(job).first(occurrence) == occurrence
        )
        if planned:
            return None
        if pause.holds(job, occurrence) is not None:
            return entry(job, occurrence, trigger, LedgerReason.PAUSED, pause.why(job), now)
        named = series_of(job).excepted(occurrence)
        if named is not None and named[0] in (LedgerReason.EXCEPTED, LedgerReason.MOVED):
            return entry(job, occurrence, trigger, named[0], "Not run: an exception of the job took it out.", now)
        return not_run(job, occurrence, trigger, LedgerReason.JOB_CHANGED, now)
    if job.state == JobState.DISABLED:
        return not_run(job, occurrence, trigger, LedgerReason.JOB_DISABLED, now)
    return not_run(job, occurrence, trigger, LedgerReason.JOB_CHANGED, now)


def while_disabled(
    job: JobRecord, since: datetime, now: datetime, reason: LedgerReason, limit: int
) -> list[LedgerEntry]:
    """The entries of the occurrences `job`'s series had from `since` up to now while it was Disabled, newest
    first, at most `limit`."""
    series = series_of(job)
    if not series.recurring:
        return []
    found: list[datetime] = []
    cursor = series.latest_missed(now)
    while cursor is not None and cursor >= since and len(found) < limit:
        if cursor < now:
            found.append(cursor)
        cursor = series.previous(cursor)
    return [not_run(job, occurrence, Trigger.SCHEDULE, reason, now) for occurrence in found]


def resumed(before: JobRecord, after: JobRecord, now: datetime) -> list[LedgerEntry]:
    """The entries of the occurrences a job had while Disabled, when a write enables it again (`before` Disabled
    since `paused_since`, `after` Enabled), or while its pause held it, when a write ends the pause early: the
    newest RETENTION_MAX_ENTRIES of them."""
    if after.state != JobState.ENABLED or before.paused_since is None:
        return []
    if before.paused_by == pause.PAUSED and after.paused_by != pause.PAUSED:
        held = while_disabled(after, before.paused_since, now, LedgerReason.PAUSED, RETENTION_MAX_ENTRIES)
        return [replace(e, message=pause.why(before)) for e in held]
    if before.state != JobState.DISABLED:
        return []
    try:
        reason = LedgerReason(before.paused_by or LedgerReason.JOB_DISABLED.value)
    except ValueError:
        reason = LedgerReason.JOB_DISABLED
    return while_disabled(after, before.paused_since, now, reason, RETENTION_MAX_ENTRIES)


def skipped_by_overlap(
    job: JobRecord,
    occurrence: datetime,
    trigger: Trigger,
    policy: OverlapPolicy,
    running: OccurrenceRef | None,
    now: datetime,
) -> LedgerEntry:
    """The entry of an occurrence its overlap `policy` (the job's, or its request's override) skipped because an
    earlier one of its job still ran (`running`, when known)."""
    which = f"the occurrence of {format_utc(running.occurrence)}" if running is not None else "an earlier occurrence"
    why = (
        f"Not run: {which} was still running and another one already waited (overlapPolicy BufferOne)."
        if policy == OverlapPolicy.BUFFER_ONE
        else f"Not run: {which} was still running (overlapPolicy Skip)."
    )
    return entry(job, occurrence, trigger, LedgerReason.SKIPPED_BY_OVERLAP, why, now)


def waiting(job: JobRecord, occurrence: datetime, trigger: Trigger, cause: WaitCause, since: datetime) -> LedgerEntry:
    """The entry of an occurrence that waits to start (its first attempt's entry replaces it)."""
    waits = entry(job, occurrence, trigger, WAITING_REASON[cause], f"Waiting for {_WAITS_FOR[cause]}.", since)
    return replace(waits, end_time=None)
