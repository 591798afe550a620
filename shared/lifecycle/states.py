"""State changes of jobs and collections under ETags: the I/O shell.

What a job becomes is shared/jobstate's to say (`resolve_state`, `moved`); this module reads and writes
under ETags. What a collection's state change does to its jobs is queued work (cascade.py). Suspended:
nothing runs (the executor gates on the collection) and job states are untouched. Deleted: the collection
takes no more writes while its delete finishes (cascade.py).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from .. import jobstate
from ..keys import CollectionKey
from ..model import JobCollectionState, JobState
from ..records import CollectionRecord, JobRecord
from ..store import ConcurrencyError, read_modify_write
from .errors import CollectionNotFound, Conflict, InvalidDefinition
from .writes import store_job

if TYPE_CHECKING:
    from ..runtime import Runtime

_ATTEMPTS = 5


def resolve_state(requested: JobState | None, existing: JobRecord | None, default: JobState) -> JobState:
    """The state a write leaves the job in (jobstate.resolve_state); a final state refuses as a Conflict."""
    try:
        return jobstate.resolve_state(requested, existing, default)
    except jobstate.StateRefused as refused:
        if refused.final:
            raise Conflict(str(refused)) from refused
        raise InvalidDefinition(str(refused), "properties.state") from refused


def set_job_state(rt: Runtime, job: JobRecord, from_state: JobState, to_state: JobState, now: datetime) -> None:
    """Move a job from one state to another and re-plan it, re-reading on races.

    Does nothing if the job is gone or no longer in `from_state` (a concurrent write decided otherwise).
    """
    try:
        read_modify_write(
            lambda: rt.store.jobs.get(job.key),
            lambda current: jobstate.moved(current, from_state, to_state, now),
            lambda updated, current: store_job(rt, updated, current, now),
            attempts=_ATTEMPTS,
            current=job,
        )
    except ConcurrencyError as exc:
        raise Conflict(f"The job '{job.key.job}' kept changing; retry.") from exc


def set_collection_state(rt: Runtime, key: CollectionKey, state: JobCollectionState) -> CollectionRecord:
    """Write the collection's state under its ETag, re-reading on a race; CollectionNotFound when it is gone
    (or being deleted, unless this marks it Deleted again)."""

    def moved(record: CollectionRecord) -> CollectionRecord | None:
        if record.state == JobCollectionState.DELETED and state != JobCollectionState.DELETED:
            raise CollectionNotFound(key)
        return None if record.state == state else replace(record, state=state)

    try:
        record = read_modify_write(
            lambda: rt.store.collections.get(key),
            moved,
            lambda new, _: rt.store.collections.replace(new),
            attempts=_ATTEMPTS,
        )
    except ConcurrencyError as exc:
        raise Conflict("The job collection kept changing; retry.") from exc
    if record is None:
        raise CollectionNotFound(key)
    return record
