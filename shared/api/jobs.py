"""Job operations over HTTP: GET, PUT, PATCH, DELETE, run now, the list, the history and the attempts.

Each handler parses the request, calls the lifecycle (shared/lifecycle) and renders its answer; what
the lifecycle refuses becomes an ARM error in http.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import lifecycle
from ..errors import bad_request
from ..lifecycle.documents import canonical_keys
from ..model import JobDefinition, JobExecutionStatus, JobProperties, JobState
from ..model.versions import ApiVersion, carry_over
from ..records import JobRecord
from .common import read_json, require_api_version
from .filters import history_status_filter, job_state_filter
from .http import ApiRequest, ApiResponse
from .ledger import list_ledger
from .newer import is_newer, require_newer
from .occurrences import refuse_preview_terms, what_if_answer
from .overrides import overlap_override
from .paging import list_body, next_link, page_request, resume, resume_text
from .paths import collection_key, job_key
from .render import render_history, render_job
from .schemas import refuse_unknown_members
from .what_if import wants_what_if

if TYPE_CHECKING:
    from ..runtime import Runtime


_LEDGER_ONLY = frozenset({JobExecutionStatus.SKIPPED, JobExecutionStatus.WAITING, JobExecutionStatus.RUNNING})


def _properties_of(request: ApiRequest, version: ApiVersion) -> dict[str, Any]:
    body = read_json(request)
    refuse_unknown_members(version, body, JobDefinition)
    properties = canonical_keys(body, JobDefinition).get("properties")
    if properties is None:
        return {}
    if not isinstance(properties, dict):
        raise bad_request("properties must be an object.", "properties")
    return properties


def _answer(rt: Runtime, record: JobRecord, status: int, version: ApiVersion) -> ApiResponse:
    body = render_job(record, rt.clock.now(), version, with_status=record.state != JobState.DISABLED)
    return ApiResponse(status, body)


def _keeping(version: ApiVersion) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    """What a write in `version` keeps of the stored job: the properties that version does not know."""
    return lambda incoming, stored: carry_over(version, JobProperties, incoming, stored)


def get_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    version = require_api_version(request)
    return ApiResponse(200, render_job(lifecycle.get_job(rt, job_key(request)), rt.clock.now(), version))


def put_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    version = require_api_version(request)
    key = job_key(request)
    if wants_what_if(request):  # newer api-version: validate, answer, write nothing (occurrences.py)
        record, created = lifecycle.put_job(rt, key, _properties_of(request, version), _keeping(version), what_if=True)
        return what_if_answer(rt, request, record, created)
    refuse_preview_terms(request)
    record, created = lifecycle.put_job(rt, key, _properties_of(request, version), _keeping(version))
    return _answer(rt, record, 201 if created else 200, version)


def patch_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    version = require_api_version(request)
    key = job_key(request)
    if wants_what_if(request):
        planned = lifecycle.patch_job(rt, key, _properties_of(request, version), _keeping(version), what_if=True)
        return what_if_answer(rt, request, planned, False)
    refuse_preview_terms(request)
    return _answer(rt, lifecycle.patch_job(rt, key, _properties_of(request, version), _keeping(version)), 200, version)


def delete_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    """With what-if: the delete's own checks and refusals, nothing removed, and 200 with `changeType` Delete and
    the `job` it would remove (absent for a stored job that cannot be read, which the delete removes by key)."""
    version = require_api_version(request)
    if wants_what_if(request):
        record = lifecycle.delete_job(rt, job_key(request), what_if=True)
        gone = {} if record is None else {"job": render_job(record, rt.clock.now(), version)}
        return ApiResponse(200, {"changeType": "Delete", **gone})
    lifecycle.delete_job(rt, job_key(request))
    return ApiResponse(200)


def run_job(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    lifecycle.run_job(rt, job_key(request), overlap_override(request))
    return ApiResponse(200)


def list_jobs(rt: Runtime, request: ApiRequest) -> ApiResponse:
    version = require_api_version(request)
    key = collection_key(request)
    state = job_state_filter(request)
    page = page_request(request)
    query = f"state={state.value if state else ''}"
    after = resume_text(rt, request, page, "jobs", query)
    records, cursor = lifecycle.jobs_page(rt, key, state, page.size, after, page.skip if page.token is None else 0)
    now = rt.clock.now()
    link = next_link(rt, request, "jobs", cursor, query)
    return ApiResponse(200, list_body([render_job(r, now, version) for r in records], link))


def list_history(rt: Runtime, request: ApiRequest) -> ApiResponse:
    """Newest first, `$filter=status eq '...'`, paged with an absolute nextLink whose `$skiptoken` seals the
    store's continuation."""
    if is_newer(request):
        return list_ledger(rt, request)  # the newer version's history: the occurrence ledger
    require_api_version(request)
    return _attempts(rt, request, "history", identity=False)


def list_attempts(rt: Runtime, request: ApiRequest) -> ApiResponse:
    """Newer api-version only: what 2016-03-01 history lists (each attempt: the first, each retry, the error
    action; and the notes), listed and paged as it, each attempt naming its occurrence as the occurrence's ledger
    entry does (`executionTag`, `occurrenceTime`, `trigger`: render.py `render_history`)."""
    require_api_version(request)
    require_newer(request, "The attempts list")
    return _attempts(rt, request, "attempts", identity=True)


def _attempts(rt: Runtime, request: ApiRequest, kind: str, identity: bool) -> ApiResponse:
    key = job_key(request)
    status = history_status_filter(request)
    if status in _LEDGER_ONLY:  # the ledger's statuses, not ones of attempts and notes
        raise bad_request(f"'{status.value}' is not a status; use one of Completed, Failed, Postponed.", "$filter")
    page = page_request(request)
    query = f"status={status.value if status else ''}"
    continuation = resume(rt, request, page, kind, query)
    if continuation is not None and not isinstance(continuation, dict):
        raise bad_request("The continuation token is not one of this list's.", "$skiptoken")
    records, token = lifecycle.history_page(
        rt, key, status, page.size, continuation, page.skip if page.token is None else 0
    )
    link = next_link(rt, request, kind, token or None, query)
    return ApiResponse(200, list_body([render_history(r, identity) for r in records], link))
