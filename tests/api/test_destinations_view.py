"""GET /subscriptions/{s}/providers/Microsoft.Scheduler/destinations (newer api-version only;
shared/api/destinations.py): the rows of the destinations that push back or fail, written through the store's own
interface (`store.destinations.write`), read back as the executor sees them now: circuit, failures, next probe,
budget, hold, last push-back. A row that recovered long ago is left out, an unreadable property leaves the list
answering, and 2016-03-01 refuses the route as it refuses the forecast. In process on the memory store, and once
over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import requests

from shared.jobstate.pushback import DestinationState
from shared.model.versions import NEWEST, STABLE
from shared.runtime import Runtime
from shared.store.destinations import DestinationRow
from tests.api.conftest import SUB, ApiServer

OLD, NEW = {"api-version": STABLE}, {"api-version": NEWEST.name}
NOW = "2026-03-01T12:00:30Z"  # the test clock's (tests/conftest.py)


@pytest.fixture
def runtime(settings, clock, storage) -> Iterator[Runtime]:
    """On the test's manual clock: what is open, held or forgotten is told against its now."""
    runtime = Runtime.create(settings, clock=clock, storage=storage)
    yield runtime
    runtime.close()


def write(rt: Runtime, destination: str, state: DestinationState) -> None:
    assert rt.store.destinations is not None
    rt.store.destinations.write(destination, DestinationRow(state))


def listed(api) -> Any:
    answer = api.call("Destinations_List", "GET", query=NEW)
    assert answer.status == 200, answer.body
    assert answer.body["asOf"] == NOW
    return answer.body["value"]


def test_each_destination_shows_its_circuit_budget_and_hold(inproc, runtime: Runtime, clock) -> None:
    now: datetime = clock.now()
    s = timedelta(seconds=1)
    write(
        runtime,
        "127.0.0.1:8080",
        DestinationState(failures=5, failing_since=now - 40 * s, failed_at=now - 2 * s, open_until=now + 3 * s),
    )
    write(
        runtime,
        "api.example.com",
        DestinationState(
            rate=4.5,
            next_free=now + 4 * s,
            hold_until=now + 20 * s,
            pushed_at=now - 10 * s,
            episode_at=now - 10 * s,
            last_status=429,
        ),
    )
    write(
        runtime,
        "servicebus:ns1",
        DestinationState(failures=7, failing_since=now - 60 * s, failed_at=now - 9 * s, open_until=now + s, probe="c1"),
    )
    assert listed(inproc) == [
        {
            "destination": "127.0.0.1:8080",
            "circuit": "Open",
            "failures": 5,
            "failingSince": "2026-03-01T11:59:50Z",
            "nextProbe": "2026-03-01T12:00:33Z",
            "budget": None,
            "holdUntil": None,
            "lastPushBack": None,
        },
        {
            "destination": "api.example.com",
            "circuit": "Closed",
            "failures": 0,
            "failingSince": None,
            "nextProbe": None,
            "budget": 4.5,
            "holdUntil": "2026-03-01T12:00:50Z",
            "lastPushBack": {"status": 429, "at": "2026-03-01T12:00:20Z"},
        },
        {
            "destination": "servicebus:ns1",
            "circuit": "HalfOpen",  # its probe is under way
            "failures": 7,
            "failingSince": "2026-03-01T11:59:30Z",
            "nextProbe": "2026-03-01T12:00:31Z",
            "budget": None,
            "holdUntil": None,
            "lastPushBack": None,
        },
    ]


def test_a_destination_that_recovered_long_ago_is_left_out(inproc, runtime: Runtime, clock) -> None:
    now: datetime = clock.now()
    forget = runtime.store.timings.pressure_forget
    # Pushed back before the budget is forgotten: the executor would drop the budget at its next request.
    write(runtime, "stale.example.com", DestinationState(rate=2.0, pushed_at=now - forget - timedelta(seconds=1)))
    # A push-back whose budget widened away just now: clear, but recent, so still shown.
    recent = now - timedelta(seconds=5)
    write(runtime, "recent.example.com", DestinationState(pushed_at=recent, last_status=503, widened_at=recent))
    write(runtime, "fine.example.com", DestinationState())  # a circuit closed again: nothing left to tell
    assert [(d["destination"], d["budget"], d["lastPushBack"]) for d in listed(inproc)] == [
        ("recent.example.com", None, {"status": 503, "at": "2026-03-01T12:00:25Z"})
    ]


def test_no_destination_is_an_empty_list(inproc) -> None:
    assert listed(inproc) == []


def test_an_unreadable_property_leaves_the_list_answering(inproc, runtime: Runtime, clock) -> None:
    now: datetime = clock.now()
    write(runtime, "a.example.com", DestinationState(failures=5, failed_at=now, open_until=now + timedelta(seconds=5)))
    write(runtime, "b.example.com", DestinationState(failures=5, failed_at=now, open_until=now + timedelta(seconds=5)))
    assert runtime.store.destinations is not None
    table = runtime.store.destinations.table
    (damaged,) = [e for e in table.query("PartitionKey eq 'destination'") if e.get("Destination") == "a.example.com"]
    table.upsert({**damaged, "OpenUntil": "soon", "Failures": "many", "Rate": "fast"})
    answer = listed(inproc)
    assert [(d["destination"], d["circuit"], d["failures"]) for d in answer] == [
        ("a.example.com", "Closed", 0),  # what is left of it (its next write mends it)
        ("b.example.com", "Open", 5),
    ]


def test_2016_03_01_has_no_destinations_list(inproc, runtime: Runtime, clock) -> None:
    write(runtime, "127.0.0.1:8080", DestinationState(failures=5, open_until=clock.now()))
    refused = inproc.call("Destinations_List", "GET", query=OLD)
    assert refused.status == 400
    assert refused.body["error"]["code"] == "MissingOrInvalidRequiredQueryParameter"
    assert refused.body["error"]["message"] == f"The destinations list needs api-version {NEWEST.name}."
    # The same answer as the forecast's, the other subscription-wide newer operation.
    forecast = inproc.call("Subscription_Forecast", "GET", query=OLD)
    assert (forecast.status, forecast.body["error"]["code"]) == (400, refused.body["error"]["code"])


def test_the_route_answers_over_http_in_every_subscription(api_server: ApiServer, runtime: Runtime, clock) -> None:
    write(runtime, "127.0.0.1:8080", DestinationState(failures=5, open_until=clock.now() + timedelta(seconds=5)))
    for subscription in (SUB, "another-subscription"):  # the deployment's destinations, whichever subscription
        url = f"{api_server.url}/subscriptions/{subscription}/providers/Microsoft.Scheduler/destinations"
        answer = requests.get(url, params=NEW, timeout=10)
        assert answer.status_code == 200, answer.text
        assert [(d["destination"], d["circuit"]) for d in answer.json()["value"]] == [("127.0.0.1:8080", "Open")]
    old = requests.get(url, params=OLD, timeout=10)
    assert old.status_code == 400 and old.json()["error"]["code"] == "MissingOrInvalidRequiredQueryParameter"
