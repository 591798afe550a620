"""What a job becomes when it is written and when the dispatcher moves it past an occurrence.

Pure: every function takes records and instants and returns a new record (or a named decision); the
lifecycle and the dispatcher are the I/O shells that call them inside their one read-modify-write.

Rules (docs/decisions.md [12], "Recurrence"):
- only Enabled and Disabled may be set on a job; Completed and Faulted are final (a job that reached one
  keeps it; it can still be deleted). Every rewrite or state change bumps the `generation`, so occurrences
  queued for the old definition are dropped, not run;
- an Enabled job is planned at its first occurrence from now (`next_execution_time`); an Enabled job with
  no occurrence left becomes Completed (e.g. endTime already past); a Disabled, Completed or Faulted job
  has no `next_execution_time`;
- the dispatcher advances an Enabled job past each occurrence it queues; a job that is not Enabled is
  advanced without queuing anything; an occurrence found more than MISSED_AFTER late was missed while
  nothing could run it: the job's missed-run policy (missed.py) says which of the missed ones run, and a
  Postponed note names the others (the ledger, ledger.py, names them one by one); an Enabled job whose
  series ends with occurrences the policy let go is Completed;
- a job with a spreadWindow fires each occurrence at its fixed offset after the nominal time (spread.py): the
  step measures lateness from the fire instant (as if the job's series were shifted by the offset) and queues
  the message at it (`DispatchStep.due_of`); the due entry, the cursor and the occurrence's identity stay
  nominal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from ..keys import JobKey
from ..model import JobCollectionState, JobProperties, JobState
from ..model.extensions import RETENTION_MAX_ENTRIES, LedgerReason, MissedRunType
from ..records import JobRecord, OverlapMarker
from .missed import CatchUp, catch_up
from .pause import PAUSED, is_resume, marks, resumed_catch_up, resumes_at
from .series import keep_series, series_of, start_of
from .spread import ZERO, fires_at, offset_of

FINAL_STATES = frozenset({JobState.COMPLETED, JobState.FAULTED})
SETTABLE_STATES = frozenset({JobState.ENABLED, JobState.DISABLED})
# The missed occurrences of an All policy are queued this far apart, so they start in order.
CATCH_UP_SPACING = timedelta(seconds=1)

# A collection's new state -> (the job state it moves, the state those jobs get). Other collection states
# (Suspended, Deleted) leave jobs alone: the executor gates on the collection instead.
COLLECTION_CASCADE = {
    JobCollectionState.DISABLED: (JobState.ENABLED, JobState.DISABLED),
    JobCollectionState.ENABLED: (JobState.DISABLED, JobState.ENABLED),
}


class StateRefused(ValueError):
    """A write asked for a state the job cannot take; `final` when the job's final state is what refuses."""

    def __init__(self, message: str, *, final: bool) -> None:
        super().__init__(message)
        self.final = final


def resolve_state(requested: JobState | None, existing: JobRecord | None, default: JobState) -> JobState:
    """The state a write leaves the job in (StateRefused when it cannot have the one requested)."""
    if existing is not None and existing.state in FINAL_STATES:
        if requested is None or requested == existing.state:
            return existing.state
        raise StateRefused(
            f"properties.state: the job is {existing.state.value}, a final state, and cannot become "
            f"{requested.value}; delete the job and create it again.",
            final=True,
        )
    if requested is not None and requested not in SETTABLE_STATES:
        raise StateRefused("state can only be set to Enabled or Disabled.", final=False)
    return requested or default


def new_generation(existing: JobRecord | None, now: datetime) -> int:
    """Increases across rewrites and across delete + re-create, so no stale queued occurrence matches."""
    return max(existing.generation + 1 if existing else 0, int(now.timestamp() * 1000))


def written(
    key: JobKey, properties: JobProperties, state: JobState, existing: JobRecord | None, now: datetime, start: datetime
) -> JobRecord:
    """A job created (`existing` None) or rewritten with a new definition, not yet planned (`planned`).

    `start` is where its series starts: its startTime, else its anchor (kept from a job that had no startTime
    either, else now; lifecycle/validation.py `effective_start`), which a job without startTime keeps. A
    rewrite keeps the job's identity, creation, counters and ETag, and gets a new generation. `count` is
    counted from the start, or from now when that is past; a rewrite that leaves the schedule alone (same
    start and recurrence) keeps its count origin, so a PATCH does not restart `count`."""
    same_schedule = (
        existing is not None
        and start_of(existing) == start
        and (existing.properties.recurrence == properties.recurrence)
    )
    origin = max(start, now)
    anchor = start if properties.start_time is None else None
    if existing is None:
        return JobRecord(
            key=key,
            properties=properties,
            state=state,
            created_time=now,
            anchor=anchor,
            count_origin=origin,
            generation=new_generation(None, now),
        )
    since, by = paused(existing, state, LedgerReason.JOB_DISABLED, now)
    return JobRecord(
        key=existing.key,
        properties=properties,
        state=state,
        created_time=existing.created_time,
        anchor=anchor,
        count_origin=existing.count_origin if same_schedule else origin,
        last_execution_time=existing.last_execution_time,
        last_success_time=existing.last_success_time,
        execution_count=existing.execution_count,
        failure_count=existing.failure_count,
        faulted_count=existing.faulted_count,
        generation=new_generation(existing, now),
        etag=existing.etag,
        paused_since=since,
        paused_by=by,
        # What runs still runs; an occurrence held back for the old definition is dropped with it (JobChanged).
        overlap=OverlapMarker(existing.overlap.running),
    )


def paused(
    existing: JobRecord, state: JobState, why: LedgerReason, now: datetime
) -> tuple[datetime | None, str | None]:
    """(paused_since, paused_by) of a job moving from `existing` to `state`: set when an Enabled job is disabled
    (from its next occurrence), kept while it stays Disabled, cleared otherwise; an Enabled job held by its pause
    keeps that mark (pause.py `marks` decides whether it still holds)."""
    if state != JobState.DISABLED:
        held = state == JobState.ENABLED and existing.state == JobState.ENABLED and existing.paused_by == PAUSED
        return (existing.paused_since, PAUSED) if held else (None, None)
    if existing.state == JobState.DISABLED:
        return existing.paused_since, existing.paused_by
    if existing.state != JobState.ENABLED:
        return None, None
    if existing.paused_by == PAUSED:  # held by its pause since then: nothing of it ran after
        return existing.paused_since, why.value
    return existing.next_execution_time or now, why.value


def planned(record: JobRecord, now: datetime) -> JobRecord:
    """A job as written (created, rewritten or moved to another state): planned at its first occurrence, or at
    the end of its pause while one holds it (pause.py)."""
    record = marks(record, now)
    enabled = record.state == JobState.ENABLED
    first = series_of(record).first(now) if enabled else None
    state = JobState.COMPLETED if enabled and first is None else record.state  # created Completed (decisions)
    due = (resumes_at(record) or first) if first is not None else None
    return keep_series(record, replace(record, state=state, next_execution_time=due, dispatched_occurrence=None))


def moved(record: JobRecord, from_state: JobState, to_state: JobState, now: datetime) -> JobRecord | None:
    """The job moved from one settable state to another (to be planned as written); None when it is no longer
    in `from_state` (a concurrent write decided otherwise)."""
    if record.state != from_state:
        return None
    since, by = paused(record, to_state, LedgerReason.COLLECTION_DISABLED, now)
    return keep_series(
        record,
        replace(record, state=to_state, generation=new_generation(record, now), paused_since=since, paused_by=by),
    )


@dataclass(frozen=True)
class DispatchStep:
    """What the dispatcher does with a job's due entry: queue `queued` (when `runs`), then move on to
    `following`. `occurrence` is the latest occurrence the step covers; `missed_from` is the first occurrence
    of a catch-up (an outage made the step cover several), and `catch_up` what the missed-run policy did."""

    due: datetime
    occurrence: datetime
    following: datetime | None
    runs: bool
    missed_from: datetime | None = None
    catch_up: CatchUp | None = None
    offset: timedelta = ZERO  # the job's spread offset (spread.py): its occurrences fire this long after
    resume_at: datetime | None = None  # a paused job's resume (pause.py): nothing it queues fires before this

    @property
    def queued(self) -> tuple[datetime, ...]:
        """The occurrences to queue, oldest first."""
        if not self.runs:
            return ()
        return self.catch_up.runs if self.catch_up is not None else (self.occurrence,)

    def due_of(self, occurrence: datetime, now: datetime) -> datetime:
        """When a queued occurrence should run: at its fire instant (the nominal one plus the job's spread
        offset), or, for the catch-up of an All policy, one after the other from now (so they start in order).
        Everything downstream (the queue's visibility, the executor's wait, lateness, lease and deadline
        arithmetic) is measured from this instant, never from the nominal occurrence."""
        catch = self.catch_up
        if catch is not None and self.resume_at is not None:
            turn = self.resume_at + CATCH_UP_SPACING * catch.runs.index(occurrence)
            return max(fires_at(occurrence, self.offset), turn)
        if catch is None or catch.policy != MissedRunType.ALL:
            return fires_at(occurrence, self.offset)
        return fires_at(now, CATCH_UP_SPACING * catch.runs.index(occurrence))


def dispatch_step(
    job: JobRecord, due: datetime, now: datetime, ledger_limit: int = RETENTION_MAX_ENTRIES
) -> DispatchStep:
    """The step for the job's entry at `due` (the job's `next_execution_time`); `ledger_limit` bounds how many
    let-go occurrences a catch-up names."""
    series = series_of(job)
    runs = job.state == JobState.ENABLED
    offset = offset_of(job)
    if runs and is_resume(job, due):
        return _resume_step(job, due, ledger_limit, offset)
    # Lateness counts from the fire instant: a spread job is its series shifted by the offset, seen at now.
    shifted = now - offset
    caught = catch_up(series, job.properties.missed_run_policy, due, shifted, ledger_limit) if runs else None
    if caught is None:
        return DispatchStep(due, due, series.following(due), runs, offset=offset)
    missed_from = due if caught.let_go_count > 0 else None
    return DispatchStep(due, caught.latest, series.following(caught.latest), runs, missed_from, caught, offset)


def _resume_step(job: JobRecord, due: datetime, ledger_limit: int, offset: timedelta) -> DispatchStep:
    """The step at a paused job's `until` (pause.py): its paused occurrences as its missed-run policy takes them,
    then its first occurrence after them."""
    series = series_of(job)
    caught = resumed_catch_up(job, ledger_limit)
    if caught is None:  # nothing was held (a write re-plans a pause that holds nothing): on to what follows
        return DispatchStep(due, due, series.first(due), False, offset=offset, resume_at=due)
    missed_from = caught.first if caught.let_go_count > 0 else None
    following = series.following(caught.latest)
    return DispatchStep(due, caught.latest, following, True, missed_from, caught, offset, resume_at=due)


def still_due(job: JobRecord, generation: int, due: datetime) -> bool:
    """The job is still the one a dispatch planned for (a PUT, PATCH or state change re-plans by itself)."""
    return job.generation == generation and job.next_execution_time == due


def awaits_its_write(job: JobRecord | None, due: datetime, generation: int, now: datetime, grace: timedelta) -> bool:
    """A due entry at `due` written with `generation`, which is not its job's own (`job` None or due at another
    instant), may yet become so: every writer adds the entry before the job it is for (a create, a rewrite, the
    dispatcher's advance to the following occurrence), so a dispatch reading between the two sees this. True until
    the entry's instant is `grace` past, unless the job is past it already: rewritten since (a newer generation),
    finished, or advanced to or beyond it."""
    if now >= due + grace:
        return False
    if job is None or generation > job.generation:
        return True
    upcoming = job.next_execution_time
    return generation == job.generation and upcoming is not None and upcoming < due


def recorded_by(job: JobRecord, now: datetime, lead: timedelta, settle: timedelta) -> datetime | None:
    """When the write recording the job's running occurrence (the one it dispatched last) should have landed, if
    an advance written now could land between the executor's read of the job and that write: the occurrence fires
    within `lead` of now (its executor may hold the job as read already) or fired less than `settle` ago. The
    recorder writes under the ETag of that read, so such an advance would refuse its whole transaction of the
    collection's jobs. None: no such write is expected, or `settle` is 0 (advances never wait)."""
    if job.dispatched_occurrence is None or settle <= ZERO:
        return None
    fire = job.dispatched_occurrence + offset_of(job)
    return fire + settle if fire - lead < now < fire + settle else None


def advanced(job: JobRecord, step: DispatchStep) -> JobRecord:
    """The job moved past the dispatched occurrence; Completed when its series ended with nothing queued (a
    missed-run policy let its last occurrences go: no attempt is left to complete it)."""
    state = job.state
    if state == JobState.ENABLED and step.runs and step.following is None and not step.queued:
        state = JobState.COMPLETED
    moved_on = replace(job, state=state, next_execution_time=step.following, dispatched_occurrence=step.occurrence)
    if step.resume_at is not None:  # the pause is over: its marks go (the pause stays in the definition, inert)
        moved_on = replace(moved_on, paused_since=None, paused_by=None)
    return keep_series(job, moved_on)


def has_advanced(job: JobRecord, generation: int, step: DispatchStep) -> bool:
    """The job already shows this step's advance (a write whose answer was lost did land)."""
    return (job.generation, job.next_execution_time, job.dispatched_occurrence) == (
        generation,
        step.following,
        step.occurrence,
    )
