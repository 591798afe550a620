"""Job operations other than writes: GET, DELETE, run now, and the list (PUT/PATCH are in job_writes.py)."""

from __future__ import annotations

from ..errors import conflict, not_found
from ..occurrence import OccurrenceMessage, Trigger
from ..records import JobRecord
from ..runtime import Runtime
from ..store.readable import UnreadableEntity
from .collection_reads import live_collection
from .common import require_api_version
from .filters import job_state_filter
from .http import ApiRequest, ApiResponse
from .job_count import release_job
from .paging import list_body, next_link, page_request, token_text
from .paths import collection_key, job_key
from .planner import FINAL_STATES
from .render import render_job


def get_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = job_key(request)
    record = rt.store.jobs.get(key)
    if record is None:
        raise not_found(f"job '{key.job}'")
    return ApiResponse(200, render_job(record, rt.clock.now()))


def purge_job(rt: Runtime, record: JobRecord) -> bool:
    """Remove a job and everything kept for it: due entry, history, claims. The job goes first, so a
    queued occurrence finds nothing to run even while the rest is being cleaned up. True if this call
    removed the job (a concurrent delete may have)."""
    removed = rt.store.jobs.delete(record.key)
    if record.next_execution_time is not None:
        rt.store.due.remove(record.key, record.next_execution_time)
    rt.store.history.delete_all(record.key)
    rt.store.claims.delete_all(record.key)
    return removed


def delete_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = job_key(request)
    try:
        record = rt.store.jobs.get(key)
    except UnreadableEntity:
        # The way out for a job that cannot be read: remove what is kept by key (a due entry left behind
        # names a job that no longer exists, so the dispatcher drops it as stale).
        rt.store.jobs.delete(key)
        rt.store.history.delete_all(key)
        rt.store.claims.delete_all(key)
        return ApiResponse(200)
    if record is None:
        raise not_found(f"job '{key.job}'")
    if purge_job(rt, record):
        release_job(rt, key.collection_key)
    return ApiResponse(200)


def run_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    """Queue one occurrence now (docs/decisions.md [11]): it counts as an execution, not toward `count`, and
    leaves nextExecutionTime alone. Enabled or Disabled jobs only; the executor gates the collection."""
    require_api_version(request)
    key = job_key(request)
    live_collection(rt, key.collection_key)
    record = rt.store.jobs.get(key)
    if record is None:
        raise not_found(f"job '{key.job}'")
    if record.state in FINAL_STATES:
        raise conflict(f"The job is {record.state.value}; a {record.state.value} job cannot run.")
    now = rt.clock.now()
    message = OccurrenceMessage(record.key, occurrence=now, due=now, trigger=Trigger.RUN_NOW,
                                generation=record.generation)
    rt.store.queue.send(message, now)
    return ApiResponse(200)


def list_jobs(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = collection_key(request)
    state = job_state_filter(request)
    page = page_request(request)
    live_collection(rt, key)
    after = token_text(page.token, "after") if page.token is not None else None
    if page.token is None and page.skip:
        after, exhausted = rt.store.jobs.skip(key, state, page.skip)
        if exhausted:
            return ApiResponse(200, list_body([], None))
    records, cursor = rt.store.jobs.page_after(key, state, page.size, after)
    now = rt.clock.now()
    link = next_link(request, {"after": cursor} if cursor else None)
    return ApiResponse(200, list_body([render_job(r, now) for r in records], link))
