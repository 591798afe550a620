"""Job writes: PUT (create or replace) and PATCH (merge), one pipeline for both.

request -> canonical JSON (secrets carried over / PATCH merged) -> model validation (400) -> job rules
(400) -> state rules (400/409) -> plan and quota (409) -> size limit (400) -> record -> planned store.
Everything that can reject runs before the first store write, so a rejected request changes nothing.
"""

from __future__ import annotations

from typing import Any

from ..errors import bad_request, conflict, not_found
from ..keys import JobKey
from ..model import HttpAuthenticationType, JobDefinition, JobProperties, JobState
from ..records import CollectionRecord, JobRecord
from ..runtime import Runtime
from .certificates import describe_pfx
from .collection_reads import live_collection
from .common import MAX_BODY_CHARS, document_size, read_json, require_api_version, validate
from .http import ApiRequest, ApiResponse
from .job_count import release_job, reserve_job
from .merge import canonical_keys, carry_secrets, drop_stale_secrets, merge
from .paths import job_key
from .planner import FINAL_STATES, new_generation, plan
from .quotas import check_job, limits_of
from .render import render_job
from .validation import effective_start, validate_job


def resolve_state(requested: JobState | None, existing: JobRecord | None, default: JobState) -> JobState:
    """The state a write leaves the job in. Only Enabled/Disabled may be set; a final state stays (409)."""
    if existing is not None and existing.state in FINAL_STATES:
        if requested is None or requested == existing.state:
            return existing.state
        raise conflict(
            f"properties.state: the job is {existing.state.value}, a final state, and cannot become "
            f"{requested.value}; delete the job and create it again."
        )
    if requested in FINAL_STATES:
        raise bad_request("state can only be set to Enabled or Disabled.", "properties.state")
    return requested or default


def _add_certificate_facts(properties: JobProperties) -> None:
    action = properties.action
    for path, holder in (("properties.action", action), ("properties.action.errorAction",
                                                          action.error_action if action else None)):
        auth = holder.request.authentication if holder is not None and holder.request is not None else None
        if auth is not None and auth.type == HttpAuthenticationType.CLIENT_CERTIFICATE and auth.pfx:
            facts = describe_pfx(auth.pfx, auth.password, f"{path}.request.authentication")
            auth.certificate_thumbprint = facts.thumbprint
            auth.certificate_subject_name = facts.subject
            auth.certificate_expiration_date = facts.expiration


def write_job(
    rt: Runtime, key: JobKey, properties: JobProperties, existing: JobRecord | None, collection: CollectionRecord,
    *, default_state: JobState,
) -> JobRecord:
    """Validate a complete job definition against its collection and store it planned."""
    now = rt.clock.now().replace(microsecond=0)
    series = validate_job(properties, now)
    state = resolve_state(properties.state, existing, default_state)
    limits = limits_of(collection.definition)
    check_job(limits, properties, series, key.job)
    _add_certificate_facts(properties)
    start = effective_start(properties, now)
    stored = properties.model_copy(update={"start_time": start, "state": None, "status": None})
    size = document_size(stored.to_document())
    if size > MAX_BODY_CHARS:
        raise bad_request(f"The job is {size} bytes as stored; the maximum job size is {MAX_BODY_CHARS}.", "properties")
    # Rewriting a job without touching its schedule keeps its count: `count` is not restarted by a PATCH.
    same_schedule = existing is not None and existing.properties.start_time == start and (
        existing.properties.recurrence == properties.recurrence)
    record = JobRecord(
        key=existing.key if existing else key, properties=stored, state=state,
        created_time=existing.created_time if existing else now,
        count_origin=existing.count_origin if existing and same_schedule else max(start, now),
        last_execution_time=existing.last_execution_time if existing else None,
        execution_count=existing.execution_count if existing else 0,
        failure_count=existing.failure_count if existing else 0,
        faulted_count=existing.faulted_count if existing else 0,
        generation=new_generation(existing, now), etag=existing.etag if existing else None,
    )
    if existing is not None:
        plan(rt, record, existing, now)
        return record
    reserve_job(rt, collection)  # the last check that can refuse: a 409 when the collection is full
    try:
        plan(rt, record, existing, now)
    except BaseException:
        release_job(rt, key.collection_key)
        raise
    return record


def _answer(rt: Runtime, record: JobRecord, status: int) -> ApiResponse:
    body = render_job(record, rt.clock.now(), with_status=record.state != JobState.DISABLED)
    return ApiResponse(status, body)


def _properties_of(data: dict[str, Any]) -> dict[str, Any]:
    properties = data.get("properties")
    if properties is None:
        return {}
    if not isinstance(properties, dict):
        raise bad_request("properties must be an object.", "properties")
    return properties


def _read_both(rt: Runtime, key: JobKey) -> tuple[CollectionRecord, JobRecord | None]:
    # Sequential on purpose: overlapping the two reads in threads measured slower on Azurite (bench/api.py).
    return live_collection(rt, key.collection_key), rt.store.jobs.get(key)


def put_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = job_key(request)
    data = canonical_keys(read_json(request), JobDefinition)
    collection, existing = _read_both(rt, key)
    properties = _properties_of(data)
    if existing is not None:
        carry_secrets(properties.get("action"), existing.properties.to_document().get("action"))
    definition = validate(JobDefinition, {"properties": properties})
    job = definition.properties or JobProperties()
    record = write_job(rt, key, job, existing, collection,
                       default_state=JobState.ENABLED)
    return _answer(rt, record, 201 if existing is None else 200)


def patch_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    """Merge a partial JobDefinition into the stored one; absent secrets and state are kept (Q9)."""
    require_api_version(request)
    key = job_key(request)
    patch = dict(_properties_of(canonical_keys(read_json(request), JobDefinition)))
    collection, existing = _read_both(rt, key)
    if existing is None:
        raise not_found(f"job '{key.job}'")
    patch.pop("status", None)  # read-only
    if patch.get("state") is None:
        patch.pop("state", None)  # null state means "unchanged" (PowerShell's PATCH sends it so)
    stored = existing.properties.to_document()
    merged = merge(stored, patch)
    if isinstance(merged.get("action"), dict):
        patch_action = patch.get("action")
        drop_stale_secrets(merged["action"], stored.get("action"),
                           patch_action if isinstance(patch_action, dict) else None)
    definition = validate(JobDefinition, {"properties": merged})
    job = definition.properties or JobProperties()
    record = write_job(rt, key, job, existing, collection,
                       default_state=existing.state)
    return _answer(rt, record, 200)
