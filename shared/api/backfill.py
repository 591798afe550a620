"""POST .../jobs/{job}/backfill (newer api-version only): run the job's occurrences of a past interval again.

Body `{"from": <instant>, "to": <instant>}` (ISO 8601; member names ignore case): the occurrences at or after
`from` and before `to` (lifecycle/backfill.py says the rules). Answers 200 with `value`: each queued occurrence's
`occurrenceTime`, `fireTime` and `executionTag` (the identity its actions carry), oldest first. `?overlapPolicy=`
overrides the job's overlap policy for these occurrences (overrides.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import lifecycle
from ..errors import bad_request
from ..keys import fold_case
from ..model import format_utc, to_utc
from .common import read_json, require_api_version
from .http import ApiRequest, ApiResponse
from .newer import require_newer
from .overrides import overlap_override
from .paths import job_key

if TYPE_CHECKING:
    from ..runtime import Runtime


def _instant(body: dict[str, Any], name: str) -> datetime:
    value = next((v for k, v in body.items() if fold_case(k) == name.lower()), None)
    if not isinstance(value, str):
        raise bad_request(f"{name} is required: an ISO 8601 date-time.", name)
    try:
        return to_utc(datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00")))
    except ValueError as exc:
        raise bad_request(f"{name} must be an ISO 8601 date-time.", name) from exc


def backfill(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    require_newer(request, "Backfill")
    key = job_key(request)
    body = read_json(request)
    queued = lifecycle.backfill_job(rt, key, _instant(body, "from"), _instant(body, "to"), overlap_override(request))
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
