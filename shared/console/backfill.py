"""The console's backfill form as a request: what the job page sends to POST .../jobs/{job}/backfill (newer
api-version; docs/decisions.md, "Missed runs, backfill, the ledger") for the interval a person typed, first as a
what-if (the occurrences it would run again, nothing queued), then for real.

Contract of `answer(body, now)` (POST console/backfill, shared/console/pages.py):
- body `{"job": <the job's ARM path>, "from": TIME, "to"?: TIME, "timeZone"?: zone, "overlapPolicy"?: policy}`.
  A TIME is a wall-clock time as a datetime-local input gives it (`2026-03-29T09:00`), read in the job's
  `timeZone` (UTC without one), as the job form reads its start; or ISO 8601 with `Z` or an offset; or
  a duration back from now (`P7D`, `PT6H`), as `scheduler jobs backfill --from` takes. `to` absent or empty: now.
- answers 200 `{"preview": REQUEST, "run": REQUEST}`, each `{"method": "POST", "path": "<job>/backfill",
  "query": {"api-version", "overlapPolicy"?}, "body": {"from", "to"}}` with the instants in UTC (`...Z`), the
  preview's query with `whatIf=true` too: the page sends the preview, shows its answer, and on confirmation sends
  the run as it is, so what runs is the interval previewed (a duration is taken back from this `now` once);
- refuses (400, the ARM error shape, the message starting with the field it names, so the page shows it there)
  input it cannot read, an interval that is empty or ends after now (the API would refuse it too), a job path
  that is not a job's, a zone the API does not take (with the zone likely meant) and an unknown overlap policy.
Stateless, as the console's other endpoints: it reads nothing stored and sends nothing.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from ..model.durations import parse_duration
from ..model.versions import PREVIEW
from ..recurrence import RecurrenceError
from ..recurrence.validation import load_zone

_JOB = re.compile(
    r"^/subscriptions/[^/?#]+/resourceGroups/[^/?#]+/providers/Microsoft\.Scheduler/jobCollections/[^/?#]+"
    r"/jobs/[^/?#]+$",
    re.IGNORECASE,
)
_POLICIES = {"allow": "Allow", "skip": "Skip", "bufferone": "BufferOne"}


class _Refused(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")


def _instant(field: str, text: Any, zone: str | None, now: datetime) -> datetime:
    if not isinstance(text, str) or not text.strip():
        raise _Refused(field, "a time is required")
    value = text.strip()
    try:
        if value.upper().startswith("P"):
            return now - parse_duration(value.upper())
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise _Refused(
            field, f"{value!r} is neither a time (2026-03-29T09:00, or with Z or +01:00) nor a duration (P7D)"
        ) from None
    if parsed.tzinfo is None:
        try:
            parsed = parsed.replace(tzinfo=load_zone(zone) if zone else UTC)
        except RecurrenceError as error:
            raise _Refused("timeZone", error.message) from None
    return parsed.astimezone(UTC)


def _utc(instant: datetime) -> str:
    # Whole seconds: a duration back from now lands between them, and the API's instants have none.
    return instant.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def plan(document: Any, now: datetime) -> dict[str, Any]:
    """The two requests for the form's `document` (see the module contract); ValueError naming the field."""
    if not isinstance(document, dict):
        raise _Refused("body", "a JSON object is required")
    job = document.get("job")
    if not isinstance(job, str) or not _JOB.match(job):
        raise _Refused("job", "the job's resource path (/subscriptions/.../jobs/NAME) is required")
    zone = document.get("timeZone") or None
    if zone is not None and not isinstance(zone, str):
        raise _Refused("timeZone", "a time zone name is required")
    since = _instant("from", document.get("from"), zone, now)
    until = _instant("to", document.get("to"), zone, now) if document.get("to") else now
    if until > now:
        raise _Refused("to", f"{_utc(until)} is after now: a backfill runs past occurrences again")
    if since >= until:
        raise _Refused("from", f"{_utc(since)} is not before the end, {_utc(until)}")
    query = {"api-version": PREVIEW}
    policy = document.get("overlapPolicy") or None
    if policy is not None:
        if not isinstance(policy, str) or policy.lower() not in _POLICIES:
            raise _Refused("overlapPolicy", f"{policy!r} is not one of Allow, Skip, BufferOne")
        query["overlapPolicy"] = _POLICIES[policy.lower()]
    run = {
        "method": "POST",
        "path": f"{job}/backfill",
        "query": query,
        "body": {"from": _utc(since), "to": _utc(until)},
    }
    return {"preview": {**run, "query": {**query, "whatIf": "true"}}, "run": run}


def answer(body: bytes, now: datetime) -> tuple[int, dict[str, Any]]:
    try:
        return 200, plan(json.loads(body or b"{}"), now)
    except ValueError as error:  # JSONDecodeError is one too
        message = str(error) if isinstance(error, _Refused) else "body: the request body is not valid JSON"
        return 400, {"error": {"code": "BadRequest", "message": message}}
