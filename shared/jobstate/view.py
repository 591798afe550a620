"""What a job shows and when it is gone: its status as the API answers it, and its expiry.

Rules (docs/wire-contract.md §2.12, docs/decisions.md "Limits and quotas"):
- a Disabled job has no `status`;
- the next execution is the planned occurrence, except that a queued occurrence stays "next" until it has
  run; once its instant has passed it stays so only when nothing follows it (the real service showed an
  Enabled one-shot job's pending immediate run; a recurring job shows its following occurrence instead);
  for a job with a spreadWindow it is the instant the occurrence fires (spread.py), as the preview shows it;
- a Completed or Faulted job expires FINISHED_JOB_AGE after its last execution (or its creation when it
  never ran), and retention deletes it with its history.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from ..model import JobState, JobStatus
from ..records import JobRecord
from .plan import FINAL_STATES
from .spread import fires_at, offset_of

FINISHED_JOB_AGE = timedelta(days=60)


def status(job: JobRecord, now: datetime) -> JobStatus | None:
    """The job's `status` as answered, or None for a Disabled job."""
    if job.state == JobState.DISABLED:
        return None
    offset = offset_of(job)
    upcoming = job.next_execution_time
    queued = job.dispatched_occurrence
    if (
        queued is not None
        and job.state == JobState.ENABLED
        and (job.last_execution_time is None or job.last_execution_time < fires_at(queued, offset))
        and (fires_at(queued, offset) > now or upcoming is None)
    ):
        upcoming = queued
    return JobStatus(
        last_execution_time=job.last_execution_time,
        next_execution_time=fires_at(upcoming, offset) if upcoming is not None else None,
        execution_count=job.execution_count,
        failure_count=job.failure_count,
        faulted_count=job.faulted_count,
    )


class Finished(Protocol):
    """What expiry reads of a job: a full record or the retention scan's projection."""

    @property
    def state(self) -> JobState: ...
    @property
    def last_execution_time(self) -> datetime | None: ...
    @property
    def created_time(self) -> datetime | None: ...


def expired(job: Finished, now: datetime) -> bool:
    """The job is final and ended long enough ago to be deleted."""
    ended = job.last_execution_time or job.created_time  # never ran: its creation
    return job.state in FINAL_STATES and ended is not None and ended + FINISHED_JOB_AGE <= now
