"""The load forecast (newer api-version only): how many occurrences fire in each minute of the next hours, and at
which destinations (jobstate/forecast.py says what is counted and how).

- GET .../jobCollections/{c}/forecast?hours=N: one collection (404 when it is missing);
- GET /subscriptions/{s}/providers/Microsoft.Scheduler/forecast?hours=N: every collection of the subscription
  (those the caller may read, under SCHEDULER_AUTH=entra: a note says when that cut the answer down).
`hours` is an integer from 1 to 168 (default 24); anything else is a 400 naming `hours`. 2016-03-01 refuses both.

The answer, 200: `from` (now), `to` (`hours` later), `minutes` (`{minute, count}`, only minutes with occurrences),
`destinations` (the busiest first: `destination`, `kind` Http|ServiceBus|StorageQueue, `total`, `busiestSecond`
`{second, count}`, `limit` (requestsPerSecond or null) and `limitHost` (the rule's host), `overLimit` (at most 100
`{second, count, collection}`, the most crowded first) and `overLimitSeconds` (how many in all), `minutes`), and
`notes` (`{code, message}`: Collection<State>, CollectionPaused, JobsNotEnabled, JobCut and Truncated (the bounds
of jobstate/forecast.py: 10,000 occurrences of a job, 1,000,000 in all), Readable).
Reads each collection's record and, for an Enabled one, all its jobs (shared/store jobs listing).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import lifecycle
from ..auth.scopes import covers
from ..errors import bad_request
from ..jobstate.forecast import MAX_HOURS, Count, Forecast, forecast
from ..keys import CollectionKey
from ..model import JobCollectionState, format_utc
from ..records import CollectionRecord, JobRecord
from .common import query_value, require_api_version
from .http import ApiRequest, ApiResponse
from .newer import require_newer
from .paths import collection_key, subscription_id

if TYPE_CHECKING:
    from ..runtime import Runtime

DEFAULT_HOURS = 24
_PAGE = 100  # collections read at once for a subscription's forecast


def _hours(request: ApiRequest) -> int:
    text = (query_value(request, "hours") or "").strip()
    if not text:
        return DEFAULT_HOURS
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_HOURS:
        raise bad_request(f"hours must be an integer from 1 to {MAX_HOURS}.", "hours")
    return int(text)


def _counts(counts: tuple[Count, ...], name: str) -> list[dict[str, Any]]:
    return [{name: format_utc(c.at), "count": c.count} for c in counts]


def forecast_body(found: Forecast) -> dict[str, Any]:
    return {
        "from": format_utc(found.since),
        "to": format_utc(found.until),
        "minutes": _counts(found.minutes, "minute"),
        "destinations": [
            {
                "destination": d.destination.name,
                "kind": d.destination.kind,
                "total": d.total,
                "busiestSecond": {"second": format_utc(d.busiest.at), "count": d.busiest.count},
                "limit": d.limit,
                "limitHost": d.limit_host,
                "overLimit": [
                    {"second": format_utc(o.second), "count": o.count, "collection": o.collection} for o in d.over_limit
                ],
                "overLimitSeconds": d.over_limit_seconds,
                "minutes": _counts(d.minutes, "minute"),
            }
            for d in found.destinations
        ],
        "notes": [{"code": n.code, "message": n.message} for n in found.notes],
    }


def _with_jobs(rt: Runtime, record: CollectionRecord) -> tuple[CollectionRecord, list[JobRecord]]:
    """The collection and its jobs; the jobs of a collection that fires nothing are not read."""
    if record.state != JobCollectionState.ENABLED:
        return record, []
    return record, rt.store.jobs.all(record.key)


def _begin(request: ApiRequest) -> int:
    """The checks every forecast makes first (the version before anything is read), and its hours."""
    require_api_version(request)
    require_newer(request, "The forecast")
    return _hours(request)


def collection_forecast(rt: Runtime, request: ApiRequest) -> ApiResponse:
    hours = _begin(request)
    record = lifecycle.get_collection(rt, collection_key(request))
    return ApiResponse(200, forecast_body(forecast([_with_jobs(rt, record)], rt.clock.now(), hours)))


def _readable(request: ApiRequest) -> Callable[[CollectionKey], bool] | None:
    """The collections the caller may read, when shared/auth cut the subscription down to some scopes."""
    scopes = request.readable
    if scopes is None:
        return None
    return lambda key: any(covers(scope, key.resource_id) for scope in scopes)


def subscription_forecast(rt: Runtime, request: ApiRequest) -> ApiResponse:
    hours = _begin(request)
    subscription = subscription_id(request)
    visible = _readable(request)
    records: list[CollectionRecord] = []
    after: str | None = None
    while True:
        page, after = lifecycle.collections_page(rt, subscription, None, _PAGE, after, 0, visible)
        records += page
        if after is None:
            break
    now: datetime = rt.clock.now()
    body = forecast_body(forecast([_with_jobs(rt, record) for record in records], now, hours))
    if visible is not None:
        body["notes"].append({"code": "Readable", "message": "Only the job collections you may read are counted."})
    return ApiResponse(200, body)
