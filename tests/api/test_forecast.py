"""GET .../jobCollections/{c}/forecast and GET /subscriptions/{s}/providers/Microsoft.Scheduler/forecast (newer
api-version only): the occurrences of the stored jobs per minute and per destination, with the seconds over a
collection's rate limit; a subscription's sums its collections; `hours` out of 1-168 and 2016-03-01 are refused
in the ARM error shape. In process, on the memory store (the handler reads what every list reads)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from shared.model.versions import NEWEST, STABLE
from shared.runtime import Runtime

OLD, NEW = {"api-version": STABLE}, {"api-version": NEWEST.name}
# The clock reads 2026-03-01T12:00:30Z (tests/conftest.py).
FROM, TO = "2026-03-01T12:00:30Z", "2026-03-01T14:00:30Z"
RULE = [{"host": "api.example.com", "requestsPerSecond": 1}]


def hourly(host: str = "api.example.com", **properties: Any) -> dict[str, Any]:
    return {
        "properties": {
            "startTime": "2026-03-01T13:00:00Z",
            "action": {"type": "Http", "request": {"uri": f"https://{host}/hook", "method": "POST"}},
            "recurrence": {"frequency": "Hour", "interval": 1},
            **properties,
        }
    }


@pytest.fixture
def runtime(settings, clock, storage) -> Iterator[Runtime]:
    """The API's runtime on the test's manual clock (tests/conftest.py): the forecast counts from its now."""
    runtime = Runtime.create(settings, clock=clock, storage=storage)
    yield runtime
    runtime.close()


@pytest.fixture
def api(inproc):
    made = inproc.call(
        "JobCollections_CreateOrUpdate",
        "PUT",
        "jc",
        body={"location": "westus", "properties": {"sku": {"name": "Standard"}, "targetRateLimits": RULE}},
        query=NEW,
    )
    assert made.status == 201, made.body
    inproc.put_job("jc", "a", hourly())
    inproc.put_job("jc", "b", hourly())
    inproc.put_job("jc", "off", hourly(state="Disabled"))
    return inproc


def forecast(api, query: dict[str, str], collection: str | None = "jc") -> Any:
    operation = "JobCollections_Forecast" if collection else "Subscription_Forecast"
    return api.call(operation, "GET", collection, None, query={**NEW, **query})


def test_a_collections_forecast_counts_its_jobs_per_minute_and_marks_the_seconds_over_its_limit(api) -> None:
    answer = forecast(api, {"hours": "2"})
    assert answer.status == 200, answer.body
    assert answer.body == {
        "from": FROM,
        "to": TO,
        "minutes": [{"minute": "2026-03-01T13:00:00Z", "count": 2}, {"minute": "2026-03-01T14:00:00Z", "count": 2}],
        "destinations": [
            {
                "destination": "api.example.com",
                "kind": "Http",
                "total": 4,
                "busiestSecond": {"second": "2026-03-01T13:00:00Z", "count": 2},
                "limit": 1.0,
                "limitHost": "api.example.com",
                "overLimit": [
                    {"second": f"2026-03-01T{h}:00:00Z", "count": 2, "collection": COLLECTION} for h in (13, 14)
                ],
                "overLimitSeconds": 2,
                "minutes": [
                    {"minute": "2026-03-01T13:00:00Z", "count": 2},
                    {"minute": "2026-03-01T14:00:00Z", "count": 2},
                ],
            }
        ],
        "notes": [
            {
                "code": "JobsNotEnabled",
                "message": f"In the job collection {COLLECTION}, jobs that fire nothing: 1 Disabled.",
            }
        ],
    }


COLLECTION = "/subscriptions/sub-api/resourceGroups/rg-api/providers/Microsoft.Scheduler/jobCollections/jc"


def test_hours_default_to_24(api) -> None:
    answer = forecast(api, {})
    assert (answer.status, answer.body["to"]) == (200, "2026-03-02T12:00:30Z")
    assert sum(m["count"] for m in answer.body["minutes"]) == 2 * 24  # 13:00 to 12:00 the next day


def test_a_subscriptions_forecast_sums_its_collections_each_under_its_own_limits(api) -> None:
    api.put_collection("other")  # no rate limit: its occurrences add to the host, not to jc's budget
    api.put_job("other", "c", hourly())
    api.put_job(
        "other",
        "bus",
        hourly(action={"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "Ns1", "queueName": "q"}}),
    )
    api.put_collection("idle")
    api.call("JobCollections_Disable", "POST", "idle")
    answer = forecast(api, {"hours": "2"}, collection=None)
    assert answer.status == 200, answer.body
    body = answer.body
    assert body["minutes"] == [{"minute": f"2026-03-01T{h}:00:00Z", "count": 4} for h in (13, 14)]
    host, bus = body["destinations"]
    assert (host["destination"], host["total"], host["limit"], host["busiestSecond"]["count"]) == (
        "api.example.com",
        6,
        1.0,
        3,
    )
    assert [(o["count"], o["collection"]) for o in host["overLimit"]] == [(2, COLLECTION), (2, COLLECTION)]
    assert (bus["destination"], bus["kind"], bus["total"], bus["limit"], bus["overLimit"]) == (
        "ns1",
        "ServiceBus",
        2,
        None,
        [],
    )
    assert {n["code"] for n in body["notes"]} == {"JobsNotEnabled", "CollectionDisabled"}


@pytest.mark.parametrize("hours", ["0", "169", "abc", "1.5", "-3", "٣"])
def test_hours_out_of_1_to_168_are_refused(api, hours: str) -> None:
    for collection in ("jc", None):
        refused = forecast(api, {"hours": hours}, collection)
        assert refused.status == 400, refused.body
        assert refused.body["error"]["code"] == "BadRequest"
        assert refused.body["error"]["message"] == "hours: hours must be an integer from 1 to 168."


def test_2016_03_01_has_no_forecast(api) -> None:
    for operation, collection in (("JobCollections_Forecast", "jc"), ("Subscription_Forecast", None)):
        refused = api.call(operation, "GET", collection, None, query=OLD)
        assert refused.status == 400
        assert refused.body["error"]["code"] == "MissingOrInvalidRequiredQueryParameter"
        assert NEWEST.name in refused.body["error"]["message"]


def test_a_missing_collection_is_a_404(api) -> None:
    missing = forecast(api, {}, collection="nowhere")
    assert missing.status == 404 and missing.body["error"]["code"] == "ResourceNotFound"
