"""Planning a written job: store it with its first occurrence, keep the due index consistent, and queue
the occurrence right away when the dispatcher's next tick would be too late.

Contract for every job write (PUT, PATCH, enable, disable, collection enable/disable):
- the new record carries a new `generation`, so occurrences queued for the old definition are dropped;
- an Enabled job has `next_execution_time` = its first occurrence from now and a due-index entry for it;
  an Enabled job with no occurrence left becomes Completed (e.g. endTime already past);
- a Disabled, Completed or Faulted job has no `next_execution_time` and no due-index entry;
- the entry of the replaced record (at `existing.next_execution_time`) is removed.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from ..dispatcher import dispatch_horizon
from ..errors import conflict
from ..model import JobState
from ..planning import first_occurrence
from ..records import JobRecord
from ..runtime import Runtime
from ..store import ConcurrencyError

# Final states: a job that reached one keeps it (docs/decisions.md); it can still be deleted.
FINAL_STATES = frozenset({JobState.COMPLETED, JobState.FAULTED})


def new_generation(existing: JobRecord | None, now: datetime) -> int:
    """Increases across rewrites and across delete + re-create, so no stale queued occurrence matches."""
    return max(existing.generation + 1 if existing else 0, int(now.timestamp() * 1000))


def store_planned(rt: Runtime, record: JobRecord, existing: JobRecord | None, now: datetime) -> None:
    """Plan and store `record` (replacing `existing` under its ETag); ConcurrencyError if that changed meanwhile."""
    enabled = record.state == JobState.ENABLED
    first = first_occurrence(record, now) if enabled else None
    if enabled and first is None:
        record.state = JobState.COMPLETED  # e.g. endTime already past: created Completed (docs/decisions.md)
    record.next_execution_time = first
    record.dispatched_occurrence = None
    old_due = existing.next_execution_time if existing is not None else None
    # The index entry goes first: an entry without its job is dropped by the dispatcher as stale,
    # whereas a job without its entry would never run.
    if first is not None:
        rt.store.due.add(record.key, first, record.generation)
    try:
        if existing is None:
            rt.store.jobs.insert(record)
        else:
            rt.store.jobs.replace(record)
    except ConcurrencyError:
        if first is not None and existing is not None and old_due == first:
            rt.store.due.add(existing.key, first, existing.generation)  # the same row: give it back
        raise
    if old_due is not None and old_due != first:
        rt.store.due.remove(record.key, old_due)
    if first is not None and first < dispatch_horizon(now):
        rt.dispatcher.dispatch(record, first, now)


def plan(rt: Runtime, record: JobRecord, existing: JobRecord | None, now: datetime) -> None:
    """store_planned for a request: a concurrent change of the same job becomes a 409 the client can retry."""
    try:
        store_planned(rt, record, existing, now)
    except ConcurrencyError as exc:
        raise conflict("The job was changed by another request; retry.") from exc


def set_job_state(rt: Runtime, job: JobRecord, from_state: JobState, to_state: JobState, now: datetime) -> None:
    """Move a job from one state to another and re-plan it (collection enable/disable), re-reading on races.

    Does nothing if the job is gone or no longer in `from_state` (a concurrent write decided otherwise).
    """
    current: JobRecord | None = job
    for _ in range(5):
        if current is None or current.state != from_state:
            return
        updated = replace(current, state=to_state, generation=new_generation(current, now))
        try:
            store_planned(rt, updated, current, now)
            return
        except ConcurrencyError:
            current = rt.store.jobs.get(job.key)
    raise conflict(f"The job '{job.key.job}' kept changing; retry.")
