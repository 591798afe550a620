"""Job collection operations: PUT and GET (issue 3 completes list, PATCH, delete, enable, disable)."""

from __future__ import annotations

from ..errors import conflict, not_found
from ..model import JobCollectionDefinition, JobCollectionProperties, JobCollectionState
from ..records import CollectionRecord
from ..runtime import Runtime
from ..store import ConcurrencyError
from .common import parse_body, require_api_version
from .http import ApiRequest, ApiResponse
from .paths import collection_key
from .render import render_collection


def put_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = collection_key(request)
    definition = parse_body(request, JobCollectionDefinition)
    properties = definition.properties or JobCollectionProperties()
    state = properties.state or JobCollectionState.ENABLED
    stored = definition.model_copy(update={
        "id": None, "type": None, "name": None, "properties": properties.model_copy(update={"state": None}),
    })
    existing = rt.store.collections.get(key)
    record = CollectionRecord(key=key, definition=stored, state=state, etag=existing.etag if existing else None)
    try:
        if existing is None:
            rt.store.collections.insert(record)
        else:
            rt.store.collections.replace(record)
    except ConcurrencyError as exc:
        raise conflict("The job collection was changed by another request; retry.") from exc
    return ApiResponse(201 if existing is None else 200, render_collection(record))


def get_collection(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = collection_key(request)
    record = rt.store.collections.get(key)
    if record is None:
        raise not_found(f"job collection '{key.collection}'")
    return ApiResponse(200, render_collection(record))
