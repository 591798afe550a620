"""GET .../jobs/{job}/history: newest first, `$filter=status eq '...'`, paged with an absolute nextLink.

History partitions are small (1,000 entries per job at most), so `$skip` simply reads past the skipped
entries once; later pages resume from the store's continuation token carried in `$skiptoken`.
"""

from __future__ import annotations

from typing import Any

from ..errors import bad_request, not_found
from ..keys import JobKey
from ..model import JobExecutionStatus
from ..runtime import Runtime
from .common import require_api_version
from .filters import history_status_filter
from .http import ApiRequest, ApiResponse
from .paging import list_body, next_link, page_request
from .paths import job_key
from .render import render_history


def _skip(rt: Runtime, key: JobKey, status: JobExecutionStatus | None, count: int) -> tuple[Any, bool]:
    """The continuation after `count` entries, and whether fewer exist."""
    continuation: Any = None
    while count > 0:
        records, continuation = rt.store.history.page(key, status, min(count, 1000), continuation)
        count -= len(records)
        if continuation is None:
            return None, True  # nothing follows the skipped entries
    return continuation, False


def list_history(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = job_key(request)
    status = history_status_filter(request)
    page = page_request(request)
    if rt.store.jobs.get(key) is None:
        raise not_found(f"job '{key.job}'")
    continuation: Any = None
    if page.token is not None:
        continuation = page.token.get("c")
        if not isinstance(continuation, dict):
            raise bad_request("$skiptoken is not a token this service issued.", "$skiptoken")
    elif page.skip:
        continuation, exhausted = _skip(rt, key, status, page.skip)
        if exhausted:
            return ApiResponse(200, list_body([], None))
    records, token = rt.store.history.page(key, status, page.size, continuation)
    link = next_link(request, {"c": token} if token else None)
    return ApiResponse(200, list_body([render_history(r) for r in records], link))
