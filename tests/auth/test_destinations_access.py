"""Who may list the destinations (entra mode, tokens from the local issuer, the real function_app.py under the local
host): a caller who may read the subscription's jobs, as for the subscription's forecast. The list is the
deployment's and cannot be cut down to some collections, so a caller who may read only some is refused, as is
one who may read nothing."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest

from shared.jobstate.pushback import DestinationState
from shared.model.versions import NEWEST
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.destinations import DestinationRow
from tests.auth.conftest import OWNER, READER_ROLE, SUB, Scheduler, collection_scope
from tests.support.identity import new_id

NEW = {"api-version": NEWEST.name}
DESTINATIONS = f"/subscriptions/{SUB}/providers/Microsoft.Scheduler/destinations"


@pytest.fixture(scope="module")
def open_circuit(scheduler: Scheduler) -> str:
    """One destination whose circuit is open, in the host's own table (its settings are the environment's)."""
    rt = Runtime.create(Settings.from_environment(dict(os.environ)))
    try:
        assert rt.store.destinations is not None
        until = datetime.now(UTC) + timedelta(minutes=5)
        rt.store.destinations.write("127.0.0.1:8080", DestinationRow(DestinationState(failures=5, open_until=until)))
    finally:
        rt.close()
    return "127.0.0.1:8080"


def test_a_reader_of_the_subscription_lists_them(scheduler: Scheduler, open_circuit: str) -> None:
    reader = new_id()
    scheduler.assign(reader, READER_ROLE, f"/subscriptions/{SUB}")
    seen = scheduler.as_(reader, "GET", DESTINATIONS, params=NEW)
    assert seen.status_code == 200, seen.text
    assert [(d["destination"], d["circuit"]) for d in seen.json()["value"]] == [(open_circuit, "Open")]


def test_a_reader_of_one_collection_is_refused(scheduler: Scheduler, open_circuit: str) -> None:
    path = collection_scope("g1", "mine")
    made = scheduler.as_(OWNER, "PUT", path, {"location": "westus", "properties": {"sku": {"name": "Standard"}}})
    assert made.status_code in (200, 201), made.text
    reader = new_id()
    scheduler.assign(reader, READER_ROLE, path)
    refused = scheduler.as_(reader, "GET", DESTINATIONS, params=NEW)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "AuthorizationFailed"
    assert open_circuit not in refused.text


def test_a_caller_who_may_read_nothing_is_refused(scheduler: Scheduler, open_circuit: str) -> None:
    refused = scheduler.as_(new_id(), "GET", DESTINATIONS, params=NEW)
    assert refused.status_code == 403, refused.text
    assert open_circuit not in refused.text
