"""Collection state operations: POST enable / disable and DELETE, each answering 200 with an empty body.

docs/decisions.md [12]: disable sets the collection and every Enabled job to Disabled; enable the reverse,
re-planning each job from now. Suspended: nothing runs (the executor gates on the collection) and job
states are untouched. Delete marks the collection Deleted first, so nothing of it runs or is written
any more, then removes its jobs (with their due entries, history and claims) and finally itself; a
DELETE interrupted half-way is finished by the next one.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from ..errors import conflict, not_found
from ..keys import CollectionKey
from ..model import JobCollectionState, JobState
from ..records import CollectionRecord
from ..runtime import Runtime
from ..store import ConcurrencyError
from .common import require_api_version
from .http import ApiRequest, ApiResponse
from .jobs import purge_job
from .paths import collection_key
from .planner import set_job_state

_JOB_TRANSITIONS = {
    JobCollectionState.DISABLED: (JobState.ENABLED, JobState.DISABLED),
    JobCollectionState.ENABLED: (JobState.DISABLED, JobState.ENABLED),
}
_BATCH = 100


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


def _set_state(rt: Runtime, key: CollectionKey, state: JobCollectionState) -> CollectionRecord:
    """Write the collection's state under its ETag, re-reading on a race; 404 when it is gone."""
    for _ in range(5):
        record = rt.store.collections.get(key)
        if record is None or (record.state == JobCollectionState.DELETED and state != JobCollectionState.DELETED):
            raise not_found(f"job collection '{key.collection}'")
        if record.state == state:
            return record
        try:
            return rt.store.collections.replace(replace(record, state=state))
        except ConcurrencyError:
            continue
    raise conflict("The job collection kept changing; retry.")


def _transition(rt: Runtime, request: ApiRequest, state: JobCollectionState) -> ApiResponse:
    require_api_version(request)
    key = collection_key(request)
    record = _set_state(rt, key, state)
    # The jobs follow even when the collection already had the state: a crash may have left some behind.
    cascade_state(rt, record.key, state, rt.clock.now())
    return ApiResponse(200)


def enable_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    return _transition(rt, request, JobCollectionState.ENABLED)


def disable_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    return _transition(rt, request, JobCollectionState.DISABLED)


def delete_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = collection_key(request)
    record = _set_state(rt, key, JobCollectionState.DELETED)
    while True:
        jobs, after = rt.store.jobs.page_after(record.key, None, _BATCH, None)
        for job in jobs:
            purge_job(rt, job)
        if after is None or not jobs:  # nothing readable left (a page of unreadable rows must not loop)
            break
    rt.store.jobs.delete_rows_of(record.key)  # what is left could not be read: removed by key
    rt.store.collections.delete(record.key)
    return ApiResponse(200)
