"""Explain one instant of a job: is it an occurrence, and what happened or will happen to it, by which rule. Pure.

`explain(job, instant, entries, collection_state, now)` answers for ANY instant (GET .../occurrences/{instant},
issue 39). `entries` are the job's ledger entries at that instant, of any trigger. Rules, in order:
- a ledger entry of the scheduled trigger wins: it is what happened (its status gives the verdict: Ran, Failed,
  Running, Waiting, Skipped, Postponed; its reason the rule). Run-now and backfill entries at the same instant are
  named in the message, never taken for the occurrence: a manual run never consumes a nominal occurrence;
- without one, an instant an exception takes out (Skip, the source of a Move) is Skipped, or WillNotRun while
  ahead (reason Excepted or Moved); an instant that is no occurrence of the series the job runs (exceptions
  applied) is NotAnOccurrence, with the nearest occurrences before and after it;
- an occurrence still ahead (it fires after now, or the dispatcher has not passed it: late, missed, queued, or
  held by the job's pause) WillRun or WillNotRun, by the first rule that holds: the job's state (JobDisabled,
  CollectionDisabled, Job<State>), its collection's (CollectionDisabled, CollectionSuspended), the pause (Paused:
  what its resume runs, under the missed-run policy), a missed-run catch-up (MissedRunPolicy when it runs,
  SkippedByPolicy or Postponed when let go), else its schedule (Schedule; Extra or Moved for an instant an
  exception put in), firing at its spread offset (spread.py) or, late, at once;
- an occurrence the dispatcher passed without a ledger entry: Skipped while the job is Disabled since before it
  (the ledger names it when the job is enabled again), else NoRecord: before the job existed (BeforeCreation) or
  pruned by the history retention (Retention).
`message` is one sentence for a person; a ledger entry's own message supplies the specifics it knows.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import Enum

from ..model import (
    JobCollectionState,
    JobExecutionStatus,
    JobPause,
    JobState,
    LedgerReason,
    OccurrenceException,
    WaitCause,
)
from ..occurrence import Trigger
from ..records import JobRecord, LedgerEntry
from . import explain_words as words
from . import pause
from .missed import is_missed
from .plan import dispatch_step
from .series import series_of, start_of
from .spread import fires_at, offset_of


class Verdict(str, Enum):
    RAN = "Ran"
    FAILED = "Failed"
    RUNNING = "Running"
    WAITING = "Waiting"
    SKIPPED = "Skipped"
    POSTPONED = "Postponed"
    WILL_RUN = "WillRun"
    WILL_NOT_RUN = "WillNotRun"
    NOT_AN_OCCURRENCE = "NotAnOccurrence"
    NO_RECORD = "NoRecord"


# Rules that decide where no ledger reason does (a `reason` beside LedgerReason's values and Job<State>).
SCHEDULE = "Schedule"
MISSED_RUN_POLICY = "MissedRunPolicy"
BEFORE_CREATION = "BeforeCreation"
RETENTION = "Retention"

_BY_STATUS = {
    JobExecutionStatus.COMPLETED: Verdict.RAN,
    JobExecutionStatus.FAILED: Verdict.FAILED,
    JobExecutionStatus.RUNNING: Verdict.RUNNING,
    JobExecutionStatus.WAITING: Verdict.WAITING,
    JobExecutionStatus.SKIPPED: Verdict.SKIPPED,
    JobExecutionStatus.POSTPONED: Verdict.POSTPONED,
}
_WAITED_FOR = {
    LedgerReason.WAITING_FOR_PREVIOUS: WaitCause.PREVIOUS,
    LedgerReason.WAITING_FOR_CONCURRENCY: WaitCause.CONCURRENCY,
    LedgerReason.WAITING_FOR_RATE_LIMIT: WaitCause.RATE_LIMIT,
    LedgerReason.DEFERRED: WaitCause.DESTINATION,
}


@dataclass(frozen=True)
class Explanation:
    occurrence: datetime
    verdict: Verdict
    reason: str  # a LedgerReason's value, or the rule that decided (SCHEDULE, ..., Job<State>)
    message: str
    is_occurrence: bool  # of the series the job runs, exceptions applied
    nominal: bool  # of its recurrence (its start, for a one-shot)
    fire_time: datetime | None = None
    attempts: int | None = None
    status: JobExecutionStatus | None = None
    nearest: tuple[datetime, ...] = ()
    exception: OccurrenceException | None = None
    pause: JobPause | None = None
    waited: timedelta | None = None
    waited_for: WaitCause | None = None
    manual: tuple[LedgerEntry, ...] = field(default=())  # run-now and backfill entries at the instant


@dataclass(frozen=True)
class _Said:
    """A verdict before the facts every explanation carries are added."""

    verdict: Verdict
    reason: str
    text: str  # without its final period
    fire_time: datetime | None = None
    exception: OccurrenceException | None = None
    pause: JobPause | None = None
    nearest: tuple[datetime, ...] = ()


def explain(
    job: JobRecord,
    instant: datetime,
    entries: list[LedgerEntry],
    collection_state: JobCollectionState,
    now: datetime,
) -> Explanation:
    series = series_of(job)
    nominal = series.engine.first_at_or_after(instant) == instant if series.recurring else instant == start_of(job)
    taken_out = instant in series.exceptions.removed
    is_occurrence = (nominal and not taken_out) or series.is_added(instant)
    scheduled = next((e for e in entries if e.trigger == Trigger.SCHEDULE.value), None)
    manual = tuple(e for e in entries if e.trigger != Trigger.SCHEDULE.value)
    named = series.excepted(instant)
    if scheduled is not None:
        return _recorded(job, scheduled, manual, nominal, is_occurrence, named, now)
    offset = offset_of(job)
    ahead = fires_at(instant, offset) > now or _undecided(job, instant)
    if named is not None and taken_out:
        reason, exception = named
        said = _Said(
            Verdict.WILL_NOT_RUN if ahead else Verdict.SKIPPED,
            reason.value,
            ("will not run: " if ahead else "") + words.taken_out(exception),
            exception=exception,
        )
    elif not is_occurrence:
        said = _not_an_occurrence(job, instant)
    elif ahead:
        said = _ahead(job, instant, collection_state, now)
    else:
        said = _passed(job, instant)
    return _finished(said, instant, nominal, is_occurrence, manual)


def _recorded(
    job: JobRecord,
    entry: LedgerEntry,
    manual: tuple[LedgerEntry, ...],
    nominal: bool,
    is_occurrence: bool,
    named: tuple[LedgerReason, OccurrenceException] | None,
    now: datetime,
) -> Explanation:
    """What the scheduled trigger's ledger entry says happened."""
    verdict = _BY_STATUS[entry.status]
    reason = entry.reason.value if entry.reason is not None else SCHEDULE
    exception = _exception(named)
    if entry.reason is None and named is not None and series_of(job).is_added(entry.occurrence):
        reason = named[0].value  # a run at an instant an exception put in: Extra, or Moved (its new instant)
    waited_for = entry.waited_for or (_WAITED_FOR.get(entry.reason) if entry.reason is not None else None)
    waited = entry.waited
    if verdict == Verdict.WAITING and entry.start_time is not None:
        waited = max(now - entry.start_time, timedelta(0))
    attempts = entry.attempts or None
    tries = words.attempts(entry.attempts)
    started = words.t(entry.start_time) if entry.start_time is not None else "an unknown time"
    if verdict == Verdict.RAN:
        text = f"ran at {started} {tries}"
        if entry.waited and waited_for is not None:
            text = f"waited {words.span(entry.waited)} for {words.WAITS_FOR[waited_for]}, then {text}"
        text += words.put_in(reason, exception)
    elif verdict == Verdict.FAILED:
        text = f"failed {tries}, the last at {started}" + words.put_in(reason, exception)
    elif verdict == Verdict.RUNNING:
        text = f"running since {started} (attempt {entry.attempts or 1})"
    elif verdict == Verdict.WAITING:
        what = words.WAITS_FOR[waited_for] if waited_for is not None else "its turn"
        text = f"waiting since {started} for {what}"
    else:
        text = words.not_run(verdict.value.lower(), entry)
    held = job.properties.pause if entry.reason == LedgerReason.PAUSED else None
    said = _Said(verdict, reason, text, exception=exception, pause=held)
    found = _finished(said, entry.occurrence, nominal, is_occurrence, manual)
    return replace(found, attempts=attempts, status=entry.status, waited=waited, waited_for=waited_for)


def _undecided(job: JobRecord, instant: datetime) -> bool:
    """The dispatcher has not passed the (past) instant yet: it is due, queued without an entry yet, or held by the
    job's pause (its resume decides)."""
    due = job.next_execution_time
    return (
        job.dispatched_occurrence == instant
        or (due is not None and due <= instant)
        or pause.holds(job, instant) is not None
    )


def _ahead(job: JobRecord, instant: datetime, collection_state: JobCollectionState, now: datetime) -> _Said:
    """An occurrence nothing has decided yet: what the rules in force do with it."""
    if job.state != JobState.ENABLED:
        reason = _disabled_by(job)
        return _Said(Verdict.WILL_NOT_RUN, reason, f"will not run: {words.IS[reason]}")
    if collection_state in (JobCollectionState.DISABLED, JobCollectionState.SUSPENDED):
        reason = f"Collection{collection_state.value}"
        return _Said(Verdict.WILL_NOT_RUN, reason, f"will not run: {words.IS[reason]}")
    held = pause.holds(job, instant)
    if held is not None:
        return _paused(job, instant, held, now)
    offset = offset_of(job)
    due = job.next_execution_time
    fires = fires_at(instant, offset)
    if due is not None and due <= instant and is_missed(due, now - offset):
        step = dispatch_step(job, due, now)
        caught = step.catch_up
        if caught is not None and instant <= caught.latest:
            policy = caught.policy.value
            if instant in step.queued:
                at = max(step.due_of(instant, now), now)
                return _Said(
                    Verdict.WILL_RUN,
                    MISSED_RUN_POLICY,
                    f"missed; the missed-run policy {policy} runs it at {words.t(at)}",
                    at,
                )
            return _Said(
                Verdict.WILL_NOT_RUN,
                caught.reason.value,
                f"missed; the missed-run policy {policy} lets it go (the latest missed is {words.t(caught.latest)})",
            )
    named = series_of(job).excepted(instant)
    reason, put_in = SCHEDULE, ""
    if named is not None:
        reason, put_in = named[0].value, words.put_in(named[0].value, named[1])
    if fires <= now:  # late, not missed: the next tick (or the queue, where it waits already) fires it
        queued = job.dispatched_occurrence == instant
        text = f"queued at {words.t(fires)}; it runs now" if queued else "late; the next tick fires it"
        return _Said(Verdict.WILL_RUN, reason, text + put_in, fires if queued else now, _exception(named))
    spread = f" ({words.span(fires - instant)} after its instant: spreadWindow)" if fires != instant else ""
    return _Said(Verdict.WILL_RUN, reason, f"will run at {words.t(fires)}{spread}{put_in}", fires, _exception(named))


def _paused(job: JobRecord, instant: datetime, held: JobPause, now: datetime) -> _Said:
    """An occurrence the job's pause holds: its resume at `until` runs it or lets it go (missed-run policy)."""
    note = f" ({held.note})" if held.note else ""
    step = dispatch_step(job, held.until, now)
    policy = step.catch_up.policy.value if step.catch_up is not None else "Latest"
    base = f"held by the job's pause until {words.t(held.until)}{note}; "
    if instant in step.queued:
        at = step.due_of(instant, now)
        text = f"{base}its resume runs it at {words.t(at)} (missed-run policy {policy})"
        return _Said(Verdict.WILL_RUN, LedgerReason.PAUSED.value, text, at, pause=held)
    text = f"{base}its resume lets it go (missed-run policy {policy})"
    return _Said(Verdict.WILL_NOT_RUN, LedgerReason.PAUSED.value, text, pause=held)


def _passed(job: JobRecord, instant: datetime) -> _Said:
    """An occurrence the dispatcher passed and the ledger does not name."""
    if job.state == JobState.DISABLED and job.paused_since is not None and job.paused_since <= instant:
        reason = _disabled_by(job)
        since = words.t(job.paused_since)
        text = f"not run: {words.IS[reason]} (since {since}); the ledger names it when the job is enabled again"
        return _Said(Verdict.SKIPPED, reason, text)
    if job.created_time is not None and instant < job.created_time:
        text = f"no record: the job was created at {words.t(job.created_time)}, after this occurrence"
        return _Said(Verdict.NO_RECORD, BEFORE_CREATION, text)
    return _Said(Verdict.NO_RECORD, RETENTION, "no record: the history retention has pruned its ledger entry")


def _not_an_occurrence(job: JobRecord, instant: datetime) -> _Said:
    before, after = _nearest(job, instant)
    nearest = tuple(x for x in (before, after) if x is not None)
    if before is not None and after is not None:
        text = f"not an occurrence: the nearest are {words.t(before)} and {words.t(after)}"
    elif before is not None:
        text = f"not an occurrence: the job's last occurrence before it is {words.t(before)}, and none follows"
    elif after is not None:
        text = f"not an occurrence: the job's first occurrence is {words.t(after)}"
    else:
        text = "not an occurrence: the job has no occurrence"
    return _Said(Verdict.NOT_AN_OCCURRENCE, SCHEDULE, text, nearest=nearest)


def _nearest(job: JobRecord, instant: datetime) -> tuple[datetime | None, datetime | None]:
    """The occurrences of the series the job runs just before and just after `instant` (not one)."""
    series = series_of(job)
    if series.recurring:
        return series.latest_missed(instant), series.first_at_or_after(instant)
    runs = ({start_of(job)} - series.exceptions.removed) | set(series.exceptions.added)
    return max((x for x in runs if x < instant), default=None), min((x for x in runs if x > instant), default=None)


def _disabled_by(job: JobRecord) -> str:
    """Why a job that is not Enabled runs nothing: JobDisabled or CollectionDisabled (its mark), else Job<State>."""
    if job.state != JobState.DISABLED:
        return f"Job{job.state.value}"
    if job.paused_by == LedgerReason.COLLECTION_DISABLED.value:
        return LedgerReason.COLLECTION_DISABLED.value
    return LedgerReason.JOB_DISABLED.value


def _exception(named: tuple[LedgerReason, OccurrenceException] | None) -> OccurrenceException | None:
    return named[1] if named is not None else None


def _finished(
    said: _Said, instant: datetime, nominal: bool, is_occurrence: bool, manual: tuple[LedgerEntry, ...]
) -> Explanation:
    return Explanation(
        occurrence=instant,
        verdict=said.verdict,
        reason=said.reason,
        message=words.sentence(said.text + words.manual_runs(manual)),
        is_occurrence=is_occurrence,
        nominal=nominal,
        fire_time=said.fire_time,
        nearest=said.nearest,
        exception=said.exception,
        pause=said.pause,
        manual=manual,
    )
