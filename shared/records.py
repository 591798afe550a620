"""What the store keeps: the validated definitions plus the state the scheduler owns.

A record's `etag` is the store's optimistic-concurrency token: every read-modify-write passes it
back, and the store refuses the write when somebody else changed the entity in between.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from .keys import CollectionKey, JobKey
from .model import (
    DstShift,
    JobCollectionDefinition,
    JobCollectionState,
    JobExecutionStatus,
    JobHistoryActionName,
    JobProperties,
    JobState,
    LedgerReason,
    OverlapPolicy,
    WaitCause,
)


@dataclass(frozen=True)
class OccurrenceRef:
    """An occurrence as the overlap marker names it: enough to queue it again (a buffered one, when released)."""

    execution_id: str
    occurrence: datetime
    trigger: str  # occurrence.Trigger's value
    generation: int
    overlap: OverlapPolicy | None = None  # the run-now or backfill request's override, if any


@dataclass(frozen=True)
class RunningOccurrence:
    """An occurrence of the job that runs: from its first attempt until it ends, `until` at the latest (a lease,
    extended by each attempt and poll, so a marker whose runner vanished lapses)."""

    ref: OccurrenceRef
    since: datetime
    until: datetime


@dataclass(frozen=True)
class WaitingOccurrence:
    """The one occurrence an overlapPolicy BufferOne job holds back until the running one ends; it keeps its place
    until `until` (renewed each time it asks again), so a waiter whose message was lost does not block the job."""

    ref: OccurrenceRef
    since: datetime
    until: datetime


@dataclass(frozen=True)
class OverlapMarker:
    """Which occurrences of a job run and which one waits (jobstate/overlap.py says how they change). Kept on the
    job's own row: the executor reads the job before every attempt anyway, and the recorder writes it after
    every attempt, so the check is free and the release rides on the write that ends the occurrence."""

    running: tuple[RunningOccurrence, ...] = ()
    waiting: WaitingOccurrence | None = None

    def __bool__(self) -> bool:
        return bool(self.running) or self.waiting is not None


NO_OVERLAP = OverlapMarker()


@dataclass(frozen=True)
class CollectionRecord:
    key: CollectionKey
    definition: JobCollectionDefinition  # location, tags, sku, quota; `state` lives in the field below
    state: JobCollectionState = JobCollectionState.ENABLED
    # How many jobs the collection holds, changed under the collection's ETag by every create and delete,
    # so maxJobCount holds exactly under concurrency. None: a collection stored before it was kept (counted
    # by the next create).
    job_count: int | None = 0
    etag: str | None = None


@dataclass(frozen=True)
class JobRecord:
    """A stored job; frozen: every change is a new record (shared/jobstate says which)."""

    key: JobKey
    properties: JobProperties  # startTime, action, recurrence (with secrets); state/status live below
    state: JobState = JobState.ENABLED
    created_time: datetime | None = None
    # Where the series of a job written without startTime is anchored (its startTime is not on the wire, as
    # the real service left it out): the instant it was first written so, or an endTime already past.
    anchor: datetime | None = None
    # `count` is counted from here: startTime, or the creation time when startTime was already past.
    count_origin: datetime | None = None
    # The dispatch cursor: the next occurrence not yet queued; the due index holds an entry for it.
    next_execution_time: datetime | None = None
    # The occurrence most recently queued; it is still "next" for users until its instant passes.
    dispatched_occurrence: datetime | None = None
    last_execution_time: datetime | None = None
    # When the main action last succeeded (jobstate.after_attempt): what an expectation of success counts from.
    last_success_time: datetime | None = None
    execution_count: int = 0
    failure_count: int = 0
    faulted_count: int = 0
    # Claim ids of the latest attempts, written with the counters they changed (one ETag-guarded
    # write): an attempt listed here is done, and a takeover of its claim must not run it again.
    recent_claims: tuple[str, ...] = ()
    # Bumped by every PUT/PATCH: occurrences queued for an older definition are dropped, not run.
    generation: int = 0
    etag: str | None = None
    # Since when a Disabled job's occurrences have not run (its next occurrence when it was disabled), and why
    # (a LedgerReason value: JobDisabled, CollectionDisabled): enabling it again names them in the ledger.
    paused_since: datetime | None = None
    paused_by: str | None = None
    # Its occurrences running and waiting, for its overlapPolicy (jobstate/overlap.py); empty for Allow jobs but
    # while occurrences a Skip or BufferOne override queued run or wait.
    overlap: OverlapMarker = NO_OVERLAP
    # The stored sealed secrets, kept as they are when the keyring could not open them (store/sealing.py).
    unopened_secrets: str | None = field(default=None, repr=False)
    # The job's occurrence series, built once per record on first use (jobstate/series.py); not stored.
    series_cache: object = field(default=None, init=False, repr=False, compare=False)

    @property
    def expect_success_within(self) -> timedelta | None:
        """The job's expectation "a success at least every D" (shared/expectations.py), or None: the extension
        property `expectSuccessWithin` of api-version 2026-12-01-preview, stored with the definition."""
        return self.properties.expect_success_within


def with_etag(record: JobRecord, etag: str) -> JobRecord:
    """The record as stored under a new ETag; it keeps its series (its definition did not change)."""
    stored = replace(record, etag=etag)
    object.__setattr__(stored, "series_cache", record.series_cache)
    return stored


@dataclass(frozen=True)
class HistoryRecord:
    key: JobKey
    execution_id: str
    expected_execution_time: datetime
    start_time: datetime
    end_time: datetime
    action_name: JobHistoryActionName
    status: JobExecutionStatus
    message: str
    retry_count: int = 0
    repeat_count: int = 0
    history_id: str = field(default="")
    # The nominal occurrence the attempt belongs to and what made it (occurrence.Trigger's value): an attempt
    # of the main action also writes its occurrence's ledger entry (LedgerEntry). None: a note, not an attempt.
    occurrence: datetime | None = None
    trigger: str = "schedule"
    # How long the occurrence waited after its instant before this (its first) attempt, and for what: its ledger
    # entry shows it (newer api-version `waited`, `waitedFor`). None: it did not wait.
    waited: timedelta | None = None
    waited_for: WaitCause | None = None
    # An exception of the job put the occurrence at its instant (Moved, Extra), a DST change placed it (after a gap;
    # the first or second instance of a repeated wall time): its ledger entry says so.
    reason: LedgerReason | None = None
    dst_shift: DstShift | None = None


@dataclass(frozen=True)
class LedgerEntry:
    """One occurrence in the ledger (the newer api-version's history): what came of it, or why it did not run.

    One per occurrence identity (job, instant, trigger): an attempt of its main action rewrites it with that
    attempt's outcome; an occurrence that did not run has `reason` and status Skipped (or Postponed, when a
    later missed occurrence ran in its place)."""

    key: JobKey
    execution_id: str
    occurrence: datetime
    trigger: str  # occurrence.Trigger's value
    status: JobExecutionStatus
    message: str
    reason: LedgerReason | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    retry_count: int = 0  # of the latest attempt
    attempts: int = 0
    repeat_count: int = 0
    entry_id: str = ""
    waited: timedelta | None = None  # before its first attempt (HistoryRecord.waited)
    waited_for: WaitCause | None = None
    dst_shift: DstShift | None = None  # a run a DST change placed (HistoryRecord.dst_shift)
