"""Job operations: PUT, GET, DELETE (issue 3 completes PATCH, run and list).

A write goes request -> validate -> record -> store, then plans the job: its first occurrence enters
the due index, and when that falls before the dispatcher's next tick it is queued right away.
"""

from __future__ import annotations

from datetime import datetime

from ..dispatcher import next_tick_after
from ..errors import conflict, not_found
from ..keys import JobKey
from ..model import JobDefinition, JobProperties, JobState
from ..planning import first_occurrence
from ..records import JobRecord
from ..runtime import Runtime
from ..store import ConcurrencyError
from .common import parse_body, require_api_version
from .http import ApiRequest, ApiResponse
from .paths import job_key
from .render import render_job
from .validation import validate_job


def _existing_collection(rt: Runtime, key: JobKey) -> None:
    if rt.store.collections.get(key.collection_key) is None:
        raise not_found(f"job collection '{key.collection}'")


def put_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = job_key(request)
    _existing_collection(rt, key)
    definition = parse_body(request, JobDefinition)
    now = rt.clock.now().replace(microsecond=0)
    properties = definition.properties or JobProperties()
    validate_job(properties, now)
    existing = rt.store.jobs.get(key)
    start_given = properties.start_time is not None
    start = properties.start_time or now
    record = JobRecord(
        key=key,
        properties=properties.model_copy(update={"start_time": start, "state": None, "status": None}),
        state=properties.state or JobState.ENABLED,
        created_time=now,
        count_origin=max(start, now),
        generation=new_generation(existing, now),
        etag=existing.etag if existing else None,
    )
    plan(rt, record, existing, now, start_given)
    return ApiResponse(201 if existing is None else 200, render_job(record, now))


def new_generation(existing: JobRecord | None, now: datetime) -> int:
    """Increases across rewrites and across delete + re-create, so no stale queued occurrence matches."""
    return max(existing.generation + 1 if existing else 0, int(now.timestamp() * 1000))


def plan(rt: Runtime, record: JobRecord, existing: JobRecord | None, now: datetime, start_given: bool) -> None:
    """Store the record with its first occurrence, index it, and queue it now if the next tick is too late."""
    first = first_occurrence(record, now, start_given) if record.state == JobState.ENABLED else None
    if record.state == JobState.ENABLED and first is None:
        record.state = JobState.COMPLETED  # e.g. endTime already past: created Completed (DECISIONS.md)
    record.next_execution_time = first
    try:
        if existing is None:
            rt.store.jobs.insert(record)
        else:
            rt.store.jobs.replace(record)
    except ConcurrencyError as exc:
        raise conflict("The job was changed by another request; retry.") from exc
    if first is not None:
        rt.store.due.add(record.key, first, record.generation)
    if existing is not None and existing.next_execution_time is not None:
        rt.store.due.remove(existing.key, existing.next_execution_time)
    if first is not None and first < next_tick_after(now):
        rt.dispatcher.dispatch(record, first, now)


def get_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = job_key(request)
    record = rt.store.jobs.get(key)
    if record is None:
        raise not_found(f"job '{key.job}'")
    return ApiResponse(200, render_job(record, rt.clock.now()))


def delete_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = job_key(request)
    record = rt.store.jobs.get(key)
    if record is None:
        raise not_found(f"job '{key.job}'")
    rt.store.jobs.delete(key)
    if record.next_execution_time is not None:
        rt.store.due.remove(key, record.next_execution_time)
    rt.store.history.delete_all(key)
    rt.store.claims.delete_all(key)
    return ApiResponse(200)
