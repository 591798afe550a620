"""State transitions of jobs and collections, and the cascade from a collection to its jobs.

Rules (docs/decisions.md [12]): only Enabled and Disabled may be set on a job; Completed and Faulted are
final (a job that reached one keeps it; it can still be deleted). Disabling a collection disables every
Enabled job; enabling it re-enables every Disabled job, re-planned from now. Suspended: nothing runs (the
executor gates on the collection) and job states are untouched. Deleted: the collection takes no more
writes while its delete finishes (purge.py).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from ..keys import CollectionKey
from ..model import JobCollectionState, JobState
from ..records import CollectionRecord, JobRecord
from ..store import ConcurrencyError, read_modify_write
from .errors import CollectionNotFound, Conflict, InvalidDefinition
from .writes import new_generation, store_job

if TYPE_CHECKING:
    from ..runtime import Runtime

FINAL_STATES = frozenset({JobState.COMPLETED, JobState.FAULTED})

_JOB_TRANSITIONS = {
    JobCollectionState.DISABLED: (JobState.ENABLED, JobState.DISABLED),
    JobCollectionState.ENABLED: (JobState.DISABLED, JobState.ENABLED),
}
_BATCH = 100
_ATTEMPTS = 5


def resolve_state(requested: JobState | None, existing: JobRecord | None, default: JobState) -> JobState:
    """The state a write leaves the job in. Only Enabled/Disabled may be set; a final state stays (Conflict)."""
    if existing is not None and existing.state in FINAL_STATES:
        if requested is None or requested == existing.state:
            return existing.state
        raise Conflict(
            f"properties.state: the job is {existing.state.value}, a final state, and cannot become "
            f"{requested.value}; delete the job and create it again."
        )
    if requested in FINAL_STATES:
        raise InvalidDefinition("state can only be set to Enabled or Disabled.", "properties.state")
    return requested or default


def set_job_state(rt: Runtime, job: JobRecord, from_state: JobState, to_state: JobState, now: datetime) -> None:
    """Move a job from one state to another and re-plan it, re-reading on races.

    Does nothing if the job is gone or no longer in `from_state` (a concurrent write decided otherwise).
    """
    def moved(current: JobRecord) -> JobRecord | None:
        if current.state != from_state:
            return None
        return replace(current, state=to_state, generation=new_generation(current, now))

    def write(updated: JobRecord, current: JobRecord) -> JobRecord:
        store_job(rt, updated, current, now)
        return updated

    try:
        read_modify_write(lambda: rt.store.jobs.get(job.key), moved, write, attempts=_ATTEMPTS, current=job)
    except ConcurrencyError as exc:
        raise Conflict(f"The job '{job.key.job}' kept changing; retry.") from exc


def cascade_state(rt: Runtime, key: CollectionKey, state: JobCollectionState, now: datetime) -> None:
    """Carry a collection's new Enabled/Disabled state to its jobs; other states leave jobs alone."""
    transition = _JOB_TRANSITIONS.get(state)
    if transition is None:
        return
    from_state, to_state = transition
    after: str | None = None
    while True:
        jobs, after = rt.store.jobs.page_after(key, from_state, _BATCH, after)
        for job in jobs:
            set_job_state(rt, job, from_state, to_state, now)
        if after is None:
            return


def set_collection_state(rt: Runtime, key: CollectionKey, state: JobCollectionState) -> CollectionRecord:
    """Write the collection's state under its ETag, re-reading on a race; CollectionNotFound when it is gone
    (or being deleted, unless this marks it Deleted again)."""
    def moved(record: CollectionRecord) -> CollectionRecord | None:
        if record.state == JobCollectionState.DELETED and state != JobCollectionState.DELETED:
            raise CollectionNotFound(key)
        return None if record.state == state else replace(record, state=state)

    try:
        record = read_modify_write(lambda: rt.store.collections.get(key), moved,
                                   lambda new, _: rt.store.collections.replace(new), attempts=_ATTEMPTS)
    except ConcurrencyError as exc:
        raise Conflict("The job collection kept changing; retry.") from exc
    if record is None:
        raise CollectionNotFound(key)
    return record


def transition_collection(rt: Runtime, key: CollectionKey, state: JobCollectionState) -> None:
    """POST enable / disable: the collection's state, then its jobs. The jobs follow even when the collection
    already had the state: a crash may have left some behind."""
    record = set_collection_state(rt, key, state)
    cascade_state(rt, record.key, state, rt.clock.now())
