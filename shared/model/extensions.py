"""Properties only the newer api-version knows (issue 26): the missed-run policy of a job, the history
retention of a collection, and what a history entry of the occurrence ledger says.

Each of them is a row of the api-version table (`EXTENSIONS` in versions.py), which keeps them out of an
older api-version's answers and document (2016-03-01 answers exactly as the old service did, without them).

Rules (docs/decisions.md, "Missed runs, backfill, the ledger"):
- `missedRunPolicy.type`: `Latest` (the default, the old rule: the latest missed occurrence runs once),
  `Skip` (none runs) or `All` (the latest `maxRuns` within `window` before now run, oldest first); `window`
  and `maxRuns` belong to `All` only;
- `historyRetention`: the newest `maxEntriesPerJob` entries per job (of its attempts and, apart, of its
  occurrences), none older than `maxAge`; failed ones are kept until `failureMaxAge` whatever the count.
Their numbers are strict in every api-version (issue 36): `"maxRuns": true` is not 1.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import Field, model_validator

from .base import CaseInsensitiveEnum, WireModel
from .durations import Duration

ALL_DEFAULT_WINDOW = timedelta(days=1)
ALL_DEFAULT_MAX_RUNS = 10
ALL_MAX_RUNS = 100  # the catch-up of one step is one queue batch at most
ALL_MAX_WINDOW = timedelta(days=60)

RETENTION_MAX_ENTRIES = 1000  # also the most ledger entries one step writes for a job
RETENTION_MAX_AGE = timedelta(days=60)
RETENTION_MAX_FAILURE_AGE = timedelta(days=365)


class MissedRunType(CaseInsensitiveEnum):
    SKIP = "Skip"
    LATEST = "Latest"
    ALL = "All"


class MissedRunPolicy(WireModel):
    type: MissedRunType | None = Field(default=None, description="Skip, Latest (the default) or All.")
    window: Duration | None = Field(
        default=None,
        description=(
            "All only: missed occurrences older than this before now are skipped (default P1D, at most P60D)."
        ),
    )
    max_runs: Annotated[int, Field(ge=1, le=ALL_MAX_RUNS, strict=True)] | None = Field(
        default=None, alias="maxRuns", description="All only: the most missed occurrences that run (default 10)."
    )

    @model_validator(mode="after")
    def _all_only(self) -> MissedRunPolicy:
        if self.kind != MissedRunType.ALL and (self.window is not None or self.max_runs is not None):
            raise ValueError("window and maxRuns belong to a missed-run policy of type All.")
        if self.window is not None and not timedelta(0) < self.window <= ALL_MAX_WINDOW:
            raise ValueError("window must be more than zero and at most 60 days (P60D).")
        return self

    @property
    def kind(self) -> MissedRunType:
        return self.type or MissedRunType.LATEST

    @property
    def effective_window(self) -> timedelta:
        return self.window or ALL_DEFAULT_WINDOW

    @property
    def effective_max_runs(self) -> int:
        return self.max_runs or ALL_DEFAULT_MAX_RUNS


class HistoryRetention(WireModel):
    max_entries_per_job: Annotated[int, Field(ge=1, le=RETENTION_MAX_ENTRIES, strict=True)] | None = Field(
        default=None, alias="maxEntriesPerJob", description="Newest entries kept per job (1-1000, default 1000)."
    )
    max_age: Duration | None = Field(
        default=None, alias="maxAge", description="Entries older than this are deleted (at most P60D, the default)."
    )
    failure_max_age: Duration | None = Field(
        default=None,
        alias="failureMaxAge",
        description="Failed entries are kept until this age whatever maxEntriesPerJob and maxAge say "
        "(at least maxAge, at most P365D; default maxAge).",
    )

    @model_validator(mode="after")
    def _bounds(self) -> HistoryRetention:
        if self.max_age is not None and not timedelta(hours=1) <= self.max_age <= RETENTION_MAX_AGE:
            raise ValueError("maxAge must be from one hour (PT1H) to 60 days (P60D).")
        if self.failure_max_age is not None and not self.effective_max_age <= self.failure_max_age <= (
            RETENTION_MAX_FAILURE_AGE
        ):
            raise ValueError("failureMaxAge must be at least maxAge and at most 365 days (P365D).")
        return self

    @property
    def effective_max_entries(self) -> int:
        return self.max_entries_per_job or RETENTION_MAX_ENTRIES

    @property
    def effective_max_age(self) -> timedelta:
        return self.max_age or RETENTION_MAX_AGE

    @property
    def effective_failure_max_age(self) -> timedelta:
        return max(self.failure_max_age or timedelta(0), self.effective_max_age)


DEFAULT_RETENTION = HistoryRetention()


class LedgerReason(CaseInsensitiveEnum):
    """Why a nominal occurrence did not run (a ledger entry's `reason`)."""

    SKIPPED_BY_POLICY = "SkippedByPolicy"  # missed; the missed-run policy (Skip, or All past window or cap) let it go
    POSTPONED = "Postponed"  # missed; the Latest policy ran the latest missed occurrence in its place
    JOB_DISABLED = "JobDisabled"
    COLLECTION_DISABLED = "CollectionDisabled"
    COLLECTION_SUSPENDED = "CollectionSuspended"
    QUOTA = "Quota"  # the collection's plan did not let it run
    JOB_CHANGED = "JobChanged"  # queued for a definition a PUT or PATCH replaced, and not one of the new one's
    # Issue 27 (concurrency.py): skipped because the previous occurrence still ran (overlapPolicy Skip, or a
    # BufferOne occurrence when one already waited); status Waiting while it waits, and for what.
    SKIPPED_BY_OVERLAP = "SkippedByOverlap"
    WAITING_FOR_PREVIOUS = "WaitingForPrevious"
    WAITING_FOR_CONCURRENCY = "WaitingForConcurrency"
    WAITING_FOR_RATE_LIMIT = "WaitingForRateLimit"
    # Issue 40: its destination pushed back or its circuit is open; deferred (status Waiting), without a retry.
    DEFERRED = "Deferred"
    # Issue 39 (occurrence_control.py): an exception skipped it, or moved it (the run at its new instant is an
    # occurrence of its own, as an added one is: Extra); the job's pause held it (with the pause's note).
    EXCEPTED = "Excepted"
    MOVED = "Moved"
    EXTRA = "Extra"
    PAUSED = "Paused"


class OccurrenceTrigger(CaseInsensitiveEnum):
    """What made an occurrence: its schedule, POST .../run, or POST .../backfill."""

    SCHEDULE = "Schedule"
    RUN_NOW = "RunNow"
    BACKFILL = "Backfill"
