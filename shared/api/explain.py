"""Explain one instant of a job (newer api-version only): GET .../jobs/{job}/occurrences/{instant}.

`instant` is an ISO 8601 date-time, read as a job body's instants are (model/instants.py `parse_instant_text`; a
path segment may carry `:` as it is or as `%3A`); anything else is a 400 naming `instant`. A missing job or
collection is a 404 as on every job route. The answer (jobstate/explain.py says how each is decided), 200:
- always: `occurrenceTime` (the instant, normalised), `isOccurrence` (of the series the job runs, exceptions
  applied), `nominal` (of its recurrence), `verdict` (Ran, Failed, Running, Waiting, Skipped, Postponed, WillRun,
  WillNotRun, NotAnOccurrence, NoRecord), `reason` (a ledger reason, or the rule that decided: Schedule,
  MissedRunPolicy, BeforeCreation, Retention, Job<State>), `message` (one sentence);
- when they apply: `fireTime`, `status` and `attempts` (of the ledger entry), `nearest` (for NotAnOccurrence),
  `exception` and `pause` (as the job's definition shows them), `waited` (ISO 8601 duration) and `waitedFor`, and
  `manualRuns` (run-now and backfill entries at the instant: `trigger`, `status`, `attempts`, `executionTag`).
Reads the collection, the job and the ledger rows at the instant (at most one per trigger), two side by side.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import jobstate
from ..errors import bad_request
from ..keys import JobKey
from ..lifecycle import CollectionNotFound, JobNotFound
from ..lifecycle.parallel import side_by_side
from ..model import JobCollectionState, format_duration, format_utc, parse_instant_text
from ..records import CollectionRecord, JobRecord, LedgerEntry
from .common import require_api_version
from .http import ApiRequest, ApiResponse
from .newer import require_newer
from .paths import job_key
from .render import wire_trigger

if TYPE_CHECKING:
    from ..runtime import Runtime

# Ledger rows one instant can have: one per trigger (schedule, run-now, backfill); more is room, not a limit.
_ROWS_AT_AN_INSTANT = 10


def _instant(request: ApiRequest) -> datetime:
    text = next((value for name, value in request.route.items() if name.lower() == "instant"), "")
    try:
        return parse_instant_text(text)
    except ValueError as exc:
        raise bad_request(f"instant must be an ISO 8601 date-time ({exc}).", "instant") from exc


def _read(rt: Runtime, key: JobKey, instant: datetime) -> tuple[CollectionRecord, JobRecord, list[LedgerEntry]]:
    """The collection, the job and its ledger rows at `instant`; 404 as every job route answers it."""

    def job_and_rows() -> tuple[JobRecord | None, list[LedgerEntry]]:
        rows, _ = rt.store.history.ledger_page(
            key, None, since=instant, until=instant, size=_ROWS_AT_AN_INSTANT, until_inclusive=True
        )
        return rt.store.jobs.get(key), rows

    collection, (record, rows) = side_by_side(
        rt.threads, lambda: rt.store.collections.get(key.collection_key), job_and_rows
    )
    if collection is None or collection.state == JobCollectionState.DELETED:
        raise CollectionNotFound(key.collection_key)
    if record is None:
        raise JobNotFound(key)
    return collection, record, [row for row in rows if row.occurrence == instant]


def explanation_body(found: jobstate.Explanation) -> dict[str, Any]:
    body: dict[str, Any] = {
        "occurrenceTime": format_utc(found.occurrence),
        "isOccurrence": found.is_occurrence,
        "nominal": found.nominal,
        "verdict": found.verdict.value,
        "reason": found.reason,
        "message": found.message,
    }
    if found.fire_time is not None:
        body["fireTime"] = format_utc(found.fire_time)
    if found.status is not None:
        body["status"] = found.status.value
    if found.attempts is not None:
        body["attempts"] = found.attempts
    if found.nearest:
        body["nearest"] = [format_utc(x) for x in found.nearest]
    if found.exception is not None:
        body["exception"] = found.exception.to_wire()
    if found.pause is not None:
        body["pause"] = found.pause.to_wire()
    if found.waited is not None:
        body["waited"] = format_duration(found.waited)
    if found.waited_for is not None:
        body["waitedFor"] = found.waited_for.value
    if found.manual:
        body["manualRuns"] = [_manual(entry) for entry in found.manual]
    return body


def _manual(entry: LedgerEntry) -> dict[str, Any]:
    trigger = wire_trigger(entry.trigger)
    return {
        "trigger": trigger.value if trigger is not None else entry.trigger,
        "status": entry.status.value,
        "attempts": entry.attempts,
        "executionTag": entry.execution_id,
    }


def explain_occurrence(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    require_newer(request, "The explanation of an occurrence")
    key = job_key(request)
    instant = _instant(request)
    collection, record, rows = _read(rt, key, instant)
    found = jobstate.explain(record, instant, rows, collection.state, rt.clock.now())
    return ApiResponse(200, explanation_body(found))
