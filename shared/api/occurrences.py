"""Preview and what-if (newer api-version only): what a job will fire, before and without writing it.

- GET .../jobs/{job}/occurrences?count=N&from=...: the next N occurrences (1-1000, default 10) that fire at or
  after `from` (an ISO 8601 instant, default now), as the dispatcher will fire them (jobstate/preview.py), each
  with `occurrenceTime`, `fireTime` and `notes` (`{code, message}`: DstGap, DstFold, EndByCount, EndByEndTime,
  OneShot, MissedRunPolicy); `notes` beside `value` speak of the job (a Disabled job fires nothing; an endless
  series stops at 9999-12-31T23:59:59Z, the calendar's end: EndOfCalendar). `from` is read as a job body's
  instants are (model/instants.py `parse_instant_text`).
- PUT or PATCH .../jobs/{job}?whatIf=true (or the header `x-ms-what-if: true`, what_if.py): validates exactly as
  the write would (every refusal is the write's own error), writes nothing, and answers 200 with `job` (the job as
  it would be stored and answered), `changeType` (Create or Modify) and the job's next occurrences as above.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import jobstate, lifecycle
from ..errors import bad_request
from ..model import JobState, format_utc, parse_instant_text
from ..records import JobRecord
from .common import query_value, require_api_version
from .http import ApiRequest, ApiResponse
from .newer import is_newer, require_newer
from .paths import job_key
from .render import render_job

if TYPE_CHECKING:
    from ..runtime import Runtime

MAX_COUNT = 1000
DEFAULT_COUNT = 10


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
        return parse_instant_text(text)
    except ValueError as exc:
        raise bad_request(f"from must be an ISO 8601 date-time ({exc}).", "from") from exc


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


def refuse_preview_terms(request: ApiRequest) -> None:
    """`count` and `from` shape a what-if's occurrences only: on a newer-version job write that is carried out,
    nothing would apply them, so they are refused rather than ignored (2016-03-01 never knew them and stays as
    the old service answered)."""
    if not is_newer(request):
        return
    for name in ("count", "from"):
        if query_value(request, name) is not None:
            raise bad_request(f"{name} applies to a what-if only (whatIf=true); nothing was written.", name)
