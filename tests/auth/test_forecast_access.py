"""Who may read a forecast (entra mode, tokens from the local issuer, the real function_app.py under the local host):
a collection's needs read access to its jobs there; a subscription's counts only the collections the caller may
read (and says so), and is refused to a caller who may read none. Nothing of a hidden collection shows.

The jobs start hours ahead (nothing fires while the test runs); their targets are loopback addresses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.model.versions import NEWEST
from tests.auth.conftest import OWNER, READER_ROLE, SUB, Scheduler, collection_scope, group_scope
from tests.support.identity import new_id

NEW = {"api-version": NEWEST.name}
START = (datetime.now(UTC) + timedelta(hours=2)).replace(minute=0, second=0, microsecond=0)
OPEN, HIDDEN = ("g1", "open", "127.0.0.1"), ("g2", "hidden", "127.0.0.2")
SUBSCRIPTION_FORECAST = f"/subscriptions/{SUB}/providers/Microsoft.Scheduler/forecast"


@pytest.fixture(scope="module")
def reader(scheduler: Scheduler) -> str:
    for group, name, host in (OPEN, HIDDEN):
        path = collection_scope(group, name)
        made = scheduler.as_(OWNER, "PUT", path, {"location": "westus", "properties": {"sku": {"name": "Standard"}}})
        assert made.status_code == 201, made.text
        job = scheduler.as_(
            OWNER,
            "PUT",
            f"{path}/jobs/hourly",
            {
                "properties": {
                    "startTime": START.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "action": {"type": "Http", "request": {"uri": f"http://{host}:9/", "method": "GET"}},
                    "recurrence": {"frequency": "Hour", "interval": 1},
                }
            },
            params=NEW,
        )
        assert job.status_code == 201, job.text
    oid = new_id()
    scheduler.assign(oid, READER_ROLE, collection_scope(*OPEN[:2]))
    return oid


def test_a_subscriptions_forecast_counts_only_what_the_caller_may_read(scheduler: Scheduler, reader: str) -> None:
    seen = scheduler.as_(reader, "GET", SUBSCRIPTION_FORECAST, params={**NEW, "hours": "4"})
    assert seen.status_code == 200, seen.text
    assert set(seen.json()) == {"from", "to", "minutes", "destinations", "notes"}  # not cut as a list of resources
    assert [d["destination"] for d in seen.json()["destinations"]] == [OPEN[2]]
    assert "Readable" in [n["code"] for n in seen.json()["notes"]]
    assert HIDDEN[1] not in seen.text and HIDDEN[2] not in seen.text
    everything = scheduler.as_(OWNER, "GET", SUBSCRIPTION_FORECAST, params={**NEW, "hours": "4"})
    assert everything.status_code == 200, everything.text
    assert sorted(d["destination"] for d in everything.json()["destinations"]) == [OPEN[2], HIDDEN[2]]
    assert "Readable" not in [n["code"] for n in everything.json()["notes"]]


def test_a_collections_forecast_needs_read_access_there(scheduler: Scheduler, reader: str) -> None:
    assert scheduler.as_(reader, "GET", f"{collection_scope(*OPEN[:2])}/forecast", params=NEW).status_code == 200
    refused = scheduler.as_(reader, "GET", f"{collection_scope(*HIDDEN[:2])}/forecast", params=NEW)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "AuthorizationFailed"


def test_a_caller_who_may_read_nothing_is_refused(scheduler: Scheduler) -> None:
    stranger = new_id()
    refused = scheduler.as_(stranger, "GET", SUBSCRIPTION_FORECAST, params=NEW)
    assert refused.status_code == 403, refused.text
    assert group_scope("g2") not in refused.text
