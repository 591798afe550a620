"""Job collection reads: GET one, list by subscription or resource group, and the lookup writes share."""

from __future__ import annotations

from ..errors import not_found
from ..keys import CollectionKey
from ..model import JobCollectionState
from ..records import CollectionRecord
from ..runtime import Runtime
from .common import require_api_version
from .http import ApiRequest, ApiResponse
from .paging import list_body, next_link, page_request, token_text
from .paths import collection_key, resource_group, subscription_id
from .render import render_collection


def live_collection(rt: Runtime, key: CollectionKey) -> CollectionRecord:
    """The collection jobs may be written to; 404 when it is missing or being deleted."""
    record = rt.store.collections.get(key)
    if record is None or record.state == JobCollectionState.DELETED:
        raise not_found(f"job collection '{key.collection}'")
    return record


def get_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = collection_key(request)
    record = rt.store.collections.get(key)
    if record is None:
        raise not_found(f"job collection '{key.collection}'")
    return ApiResponse(200, render_collection(record))


def _list(rt: Runtime, request: ApiRequest, group: str | None) -> ApiResponse:
    require_api_version(request)
    subscription = subscription_id(request)
    page = page_request(request)
    after = token_text(page.token, "after") if page.token is not None else None
    if page.token is None and page.skip:
        after, exhausted = rt.store.collections.skip(subscription, group, page.skip)
        if exhausted:
            return ApiResponse(200, list_body([], None))
    records, cursor = rt.store.collections.page_after(subscription, group, page.size, after)
    link = next_link(request, {"after": cursor} if cursor else None)
    return ApiResponse(200, list_body([render_collection(r) for r in records], link))


def list_by_subscription(rt: Runtime, request: ApiRequest) -> ApiResponse:
    return _list(rt, request, None)


def list_by_resource_group(rt: Runtime, request: ApiRequest) -> ApiResponse:
    return _list(rt, request, resource_group(request))
