"""POST .../jobs/{job}/backfill (newer api-version only): run the job's occurrences of a past interval again.

Body `{"from": <instant>, "to": <instant>}` (ISO 8601 text, read as a job body's instants are; member names ignore
case, and a member named twice in any case, or any other member, is a 400): the occurrences at or after
`from` and before `to` (lifecycle/backfill.py says the rules). Answers 200 with `value`: each queued occurrence's
`occurrenceTime`, `fireTime` and `executionTag` (the identity its actions carry), oldest first. `?overlapPolicy=`
overrides the job's overlap policy for these occurrences (overrides.py). Asked as a what-if (what_if.py): the same
checks and answer, the occurrences it would queue, and nothing queued.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import lifecycle
from ..errors import bad_request
from ..keys import fold_case
from ..model import format_utc, parse_instant_text
from .common import read_json, require_api_version
from .http import ApiRequest, ApiResponse
from .newer import require_newer
from .overrides import overlap_override
from .paths import job_key
from .what_if import wants_what_if

if TYPE_CHECKING:
    from ..runtime import Runtime


_MEMBERS = ("from", "to")


def _instant(body: dict[str, Any], name: str) -> datetime:
    for key in body:
        if fold_case(key) not in _MEMBERS:
            raise bad_request(f"The member {key[:100]!r} is not part of a backfill request, which takes from and to.")
    given = [key for key in body if fold_case(key) == name]
    if len(given) > 1:  # as in a job's body: names ignore case, so `from` and `FROM` are one member sent twice
        raise bad_request(f"The member '{name}' is given twice (property names ignore case).", name)
    value = body[given[0]] if given else None
    if not isinstance(value, str):
        raise bad_request(f"{name} is required: an ISO 8601 date-time.", name)
    try:
        return parse_instant_text(value)
    except ValueError as exc:
        raise bad_request(f"{name} must be an ISO 8601 date-time ({exc}).", name) from exc


def backfill(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    require_newer(request, "Backfill")
    key = job_key(request)
    body = read_json(request)
    since, until, overlap = _instant(body, "from"), _instant(body, "to"), overlap_override(request)
    queued = lifecycle.backfill_job(rt, key, since, until, overlap, what_if=wants_what_if(request))
    return ApiResponse(
        200,
        {
            "value": [
                {
                    "occurrenceTime": format_utc(b.occurrence),
                    "fireTime": format_utc(b.fires),
                    "executionTag": b.execution_id,
                }
                for b in queued
            ]
        },
    )
