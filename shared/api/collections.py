"""Job collection operations over HTTP: GET, the two lists, PUT, PATCH, DELETE, POST enable / disable.

Each handler parses the request, calls the lifecycle (shared/lifecycle) and renders its answer; what
the lifecycle refuses becomes an ARM error in http.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import lifecycle
from ..lifecycle.documents import canonical_keys, validate
from ..model import JobCollectionDefinition, JobCollectionState
from .common import read_json, require_api_version
from .http import ApiRequest, ApiResponse
from .paging import list_body, next_link, page_request, token_text
from .paths import collection_key, resource_group, subscription_id
from .render import render_collection

if TYPE_CHECKING:
    from ..runtime import Runtime


def get_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    return ApiResponse(200, render_collection(lifecycle.get_collection(rt, collection_key(request))))


def _list(rt: Runtime, request: ApiRequest, group: str | None) -> ApiResponse:
    require_api_version(request)
    subscription = subscription_id(request)
    page = page_request(request)
    after = token_text(page.token, "after") if page.token is not None else None
    records, cursor = lifecycle.collections_page(rt, subscription, group, page.size, after,
                                                 page.skip if page.token is None else 0)
    link = next_link(request, {"after": cursor} if cursor else None)
    return ApiResponse(200, list_body([render_collection(r) for r in records], link))


def list_by_subscription(rt: Runtime, request: ApiRequest) -> ApiResponse:
    return _list(rt, request, None)


def list_by_resource_group(rt: Runtime, request: ApiRequest) -> ApiResponse:
    return _list(rt, request, resource_group(request))


def put_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = collection_key(request)
    definition = validate(JobCollectionDefinition, canonical_keys(read_json(request), JobCollectionDefinition))
    record = lifecycle.put_collection(rt, key, definition)
    return ApiResponse(201, render_collection(record))  # created or replaced: 201, as recorded (wire-contract.md §1.2)


def patch_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = collection_key(request)
    patch: dict[str, Any] = canonical_keys(read_json(request), JobCollectionDefinition)
    return ApiResponse(200, render_collection(lifecycle.patch_collection(rt, key, patch)))


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
