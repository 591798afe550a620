"""Job collection operations over HTTP: GET, the two lists, PUT, PATCH, DELETE, POST enable / disable.

Each handler parses the request, calls the lifecycle (shared/lifecycle) and renders its answer; what
the lifecycle refuses becomes an ARM error in http.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import lifecycle
from ..auth.scopes import covers
from ..keys import CollectionKey
from ..lifecycle.documents import canonical_keys, validate
from ..model import JobCollectionDefinition, JobCollectionState
from ..model.versions import carry_over
from ..records import CollectionRecord
from .common import read_json, require_api_version
from .http import ApiRequest, ApiResponse
from .paging import list_body, next_link, page_request, resume_text
from .paths import collection_key, resource_group, subscription_id
from .render import render_collection
from .schemas import refuse_unknown_members
from .what_if import wants_what_if

if TYPE_CHECKING:
    from ..runtime import Runtime


def get_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    return ApiResponse(200, render_collection(lifecycle.get_collection(rt, collection_key(request))))


def _readable(request: ApiRequest) -> Callable[[CollectionKey], bool] | None:
    """The collections the caller may read, when shared/auth cut the list down to some scopes."""
    scopes = request.readable
    if scopes is None:
        return None
    return lambda key: any(covers(scope, key.resource_id) for scope in scopes)


def _list(rt: Runtime, request: ApiRequest, group: str | None) -> ApiResponse:
    """Keyset pages cut down while reading (shared/store/pages.py): a page holds up to 100 collections the
    caller may read and the sealed cursor is one of them, so nothing tells of the others."""
    require_api_version(request)
    subscription = subscription_id(request)
    page = page_request(request)
    after = resume_text(rt, request, page, "jobCollections")
    records, cursor = lifecycle.collections_page(
        rt, subscription, group, page.size, after, page.skip if page.token is None else 0, _readable(request)
    )
    link = next_link(rt, request, "jobCollections", cursor)
    return ApiResponse(200, list_body([render_collection(r) for r in records], link))


def list_by_subscription(rt: Runtime, request: ApiRequest) -> ApiResponse:
    return _list(rt, request, None)


def list_by_resource_group(rt: Runtime, request: ApiRequest) -> ApiResponse:
    return _list(rt, request, resource_group(request))


def put_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    version = require_api_version(request)
    key = collection_key(request)
    body = read_json(request)
    refuse_unknown_members(version, body, JobCollectionDefinition)
    definition = validate(JobCollectionDefinition, canonical_keys(body, JobCollectionDefinition))
    dry = wants_what_if(request)
    record = lifecycle.put_collection(
        rt,
        key,
        definition,
        lambda incoming, stored: carry_over(version, JobCollectionDefinition, incoming, stored),
        what_if=dry,
    )
    if dry:  # etag None: no collection is stored under the name (lifecycle.put_collection)
        return _what_if_answer("Create" if record.etag is None else "Modify", record)
    return ApiResponse(201, render_collection(record))  # created or replaced: 201, as recorded (wire-contract.md §1.2)


def patch_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    version = require_api_version(request)
    key = collection_key(request)
    body = read_json(request)
    refuse_unknown_members(version, body, JobCollectionDefinition)
    patch: dict[str, Any] = canonical_keys(body, JobCollectionDefinition)
    if wants_what_if(request):
        return _what_if_answer("Modify", lifecycle.patch_collection(rt, key, patch, what_if=True))
    return ApiResponse(200, render_collection(lifecycle.patch_collection(rt, key, patch)))


def _what_if_answer(change: str, record: CollectionRecord) -> ApiResponse:
    """A collection PUT or PATCH asked as a what-if: checked as the write, nothing written (what_if.py)."""
    return ApiResponse(200, {"changeType": change, "jobCollection": render_collection(record)})


def delete_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    lifecycle.delete_collection(rt, collection_key(request))
    return ApiResponse(200)


def enable_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    lifecycle.transition_collection(rt, collection_key(request), JobCollectionState.ENABLED)
    return ApiResponse(200)


def disable_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    lifecycle.transition_collection(rt, collection_key(request), JobCollectionState.DISABLED)
    return ApiResponse(200)
