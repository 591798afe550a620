"""History in the newer api-version: the occurrence ledger, one entry per nominal occurrence of the job in its
retention window, the ones that did not run included, with the reason
(docs/decisions.md, "Missed runs, backfill, the ledger").
2016-03-01 history (jobs.py) keeps listing attempts, exactly as before.

An entry: `expectedExecutionTime` and `occurrenceTime` (the occurrence), `trigger` (Schedule, RunNow,
Backfill), `executionTag` (the identity its actions carried), `status` (of its latest main-action attempt, or
Skipped / Postponed), `reason` (why it did not run), `attempts`, `retryCount` (of the latest attempt),
`repeatCount`, `startTime`/`endTime` (of the latest attempt, or when it was let go), `message`; `waited` and
`waitedFor` when it waited before its first attempt, and status Waiting or Running while it waits or its
asynchronous target is polled (docs/decisions.md, "Overlap, limits, long-running completion, spread"). Newest first,
`$filter` on status and a time range (ledger_filter.py), paged like every list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import lifecycle
from ..errors import bad_request
from ..model import JobHistoryActionName, JobHistoryProperties
from ..records import LedgerEntry
from .common import require_api_version
from .http import ApiRequest, ApiResponse
from .ledger_filter import ledger_filter
from .paging import list_body, next_link, page_request, resume
from .paths import job_key
from .render import history_document, wire_trigger

if TYPE_CHECKING:
    from ..runtime import Runtime


def render_entry(entry: LedgerEntry) -> dict[str, Any]:
    return history_document(
        entry.key,
        entry.entry_id,
        JobHistoryProperties(
            start_time=entry.start_time,
            end_time=entry.end_time,
            expected_execution_time=entry.occurrence,
            action_name=JobHistoryActionName.MAIN_ACTION,
            status=entry.status,
            message=entry.message,
            retry_count=entry.retry_count,
            repeat_count=entry.repeat_count,
            occurrence_time=entry.occurrence,
            trigger=wire_trigger(entry.trigger),
            execution_tag=entry.execution_id,
            reason=entry.reason,
            attempts=entry.attempts,
            waited=entry.waited,
            waited_for=entry.waited_for,
            dst_shift=entry.dst_shift,
        ),
    )


def list_ledger(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    key = job_key(request)
    found = ledger_filter(request)
    page = page_request(request)
    # The filter in canonical form binds the sealed token to it (paging.py).
    since = found.since.isoformat() if found.since else ""
    until = found.until.isoformat() if found.until else ""
    query = (
        f"status={found.status.value if found.status else ''}&since={since}{'=' if found.since_inclusive else ''}"
        f"&until={until}{'=' if found.until_inclusive else ''}"
    )
    continuation = resume(rt, request, page, "ledger", query)
    if continuation is not None and not isinstance(continuation, dict):
        raise bad_request("The continuation token is not one of this list's.", "$skiptoken")
    entries, token = lifecycle.ledger_page(
        rt,
        key,
        found.status,
        found.since,
        found.until,
        page.size,
        continuation,
        page.skip if page.token is None else 0,
        since_inclusive=found.since_inclusive,
        until_inclusive=found.until_inclusive,
    )
    link = next_link(rt, request, "ledger", token or None, query)
    return ApiResponse(200, list_body([render_entry(e) for e in entries], link))
