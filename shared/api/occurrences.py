"""Preview and what-if (newer api-version only): what a job will fire, before and without writing it.

- GET .../jobs/{job}/occurrences?count=N&from=...: the next N occurrences (1-1000, default 10) that fire at or
  after `from` (an ISO 8601 instant, default now), as the dispatcher will fire them (jobstate/preview.py), each
  with `occurrenceTime`, `fireTime` and `notes` (`{code, message}`: DstGap, DstFold, EndByCount, EndByEndTime,
  OneShot, MissedRunPolicy); `notes` beside `value` speak of the job (a Disabled job fires nothing).
- PUT or PATCH .../jobs/{job}?whatIf=true (or the header `x-ms-what-if: true`): validates exactly as the write
  would (every refusal is the write's own error), writes nothing, and answers 200 with `job` (the job as it would
  be stored and answered), `changeType` (Create or Modify) and the job's next occurrences as above.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import jobstate, lifecycle
from ..errors import bad_request
from ..model import JobState, format_utc, to_utc
from ..records import JobRecord
from .common import query_value, require_api_version
from .http import ApiRequest, ApiResponse
from .newer import require_newer
from .paths import job_key
from .render import render_job

if TYPE_CHECKING:
    from ..runtime import Runtime

MAX_COUNT = 1000
DEFAULT_COUNT = 10
WHAT_IF_HEADER = "x-ms-what-if"


def wants_what_if(request: ApiRequest) -> bool:
    """The request asks for a what-if (query `whatIf=true` or header `x-ms-what-if: true`); 400 for another value,
    and for an api-version without what-if (a write must never happen because the flag was not understood)."""
    values = [query_value(request, "whatIf")]
    values += [v for k, v in request.headers.items() if k.lower() == WHAT_IF_HEADER]
    given = [v.strip().lower() for v in values if v is not None]
    if not given:
        return False
    if any(v not in ("true", "false") for v in given):
        raise bad_request("whatIf must be true or false.", "whatIf")
    if "true" not in given:
        return False
    require_newer(request, "whatIf")
    return True


def _count(request: ApiRequest) -> int:
    text = query_value(request, "count")
    if text is None:
        return DEFAULT_COUNT
    if not text.strip().isascii() or not text.strip().isdigit() or not 1 <= int(text.strip()) <= MAX_COUNT:
        raise bad_request(f"count must be an integer from 1 to {MAX_COUNT}.", "count")
    return int(text.strip())


def _from(request: ApiRequest) -> datetime | None:
    text = query_value(request, "from")
    if text is None or not text.strip():
        return None
    try:
        return to_utc(datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00")))
    except ValueError as exc:
        raise bad_request("from must be an ISO 8601 date-time.", "from") from exc


def preview_body(record: JobRecord, now: datetime, count: int, since: datetime | None) -> dict[str, Any]:
    items, notes = jobstate.upcoming(record, now, count, since)
    return {
        "value": [
            {
                "occurrenceTime": format_utc(u.occurrence),
                "fireTime": format_utc(u.fires),
                "notes": [{"code": n.code, "message": n.message} for n in u.notes],
            }
            for u in items
        ],
        "notes": [{"code": n.code, "message": n.message} for n in notes],
    }


def list_occurrences(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    require_newer(request, "The occurrences preview")
    key = job_key(request)
    count, since = _count(request), _from(request)
    record = lifecycle.get_job(rt, key)
    return ApiResponse(200, preview_body(record, rt.clock.now(), count, since))


def what_if_answer(rt: Runtime, request: ApiRequest, record: JobRecord, created: bool) -> ApiResponse:
    now = rt.clock.now()
    version = require_api_version(request)
    return ApiResponse(
        200,
        {
            "changeType": "Create" if created else "Modify",
            "job": render_job(record, now, version, with_status=record.state != JobState.DISABLED),
            "occurrences": preview_body(record, now, _count(request), _from(request)),
        },
    )
