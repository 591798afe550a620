"""GET .../jobs/{job}/history: newest first, paged with an absolute nextLink."""

from __future__ import annotations

from ..errors import not_found
from ..runtime import Runtime
from .common import continuation, next_link, page_size, require_api_version
from .http import ApiRequest, ApiResponse
from .paths import job_key
from .render import render_history


def list_history(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = job_key(request)
    if rt.store.jobs.get(key) is None:
        raise not_found(f"job '{key.job}'")
    records, token = rt.store.history.page(key, None, page_size(request), continuation(request))
    return ApiResponse(200, {"value": [render_history(r) for r in records], "nextLink": next_link(request, token)})
