"""The deployed app on two storage accounts: `python -m devhost` serving function_app.py with
SCHEDULER_STORAGE_ACCOUNTS naming a second Azurite. Collections created over HTTP land in both accounts,
the list merges them, and a job in each account fires once through the host's own queue trigger."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import requests

from devhost.azurite import Azurite
from shared.keys import CollectionKey
from shared.store.routing import account_of
from tests.support.local_host import local_host

SUB = "s-host"
V = {"api-version": "2016-03-01"}


@pytest.fixture
def host(azurite: Azurite, second_azurite: Azurite) -> Iterator[str]:
    settings = {"SCHEDULER_STORAGE_ACCOUNTS": second_azurite.connection_string, "SCHEDULER_AUTH": "none"}
    with local_host(azurite, **settings) as url:
        yield url


def test_the_host_spreads_collections_over_both_accounts_and_fires_jobs_in_each(host: str, http_target) -> None:
    names = [f"jc{i}" for i in range(6)]
    homes = {name: account_of(CollectionKey(SUB, "rg", name), 2) for name in names}
    assert set(homes.values()) == {0, 1}
    base = f"{host}/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections"
    for name in names:
        created = requests.put(
            f"{base}/{name}",
            params=V,
            timeout=10,
            json={"location": "West US", "properties": {"sku": {"name": "Standard"}}},
        )
        assert created.status_code == 201, created.text
    listed = requests.get(
        f"{host}/subscriptions/{SUB}/providers/Microsoft.Scheduler/jobCollections", params=V, timeout=10
    ).json()
    assert [c["name"] for c in listed["value"]] == names
    due = datetime.now(UTC) + timedelta(seconds=4)  # inside the API's fast path: queued by the PUT itself
    fired = [name for name in names if homes[name] == 0][:1] + [name for name in names if homes[name] == 1][:1]
    for name in fired:
        answer = requests.put(
            f"{base}/{name}/jobs/once",
            params=V,
            timeout=10,
            json={
                "properties": {
                    "startTime": due.isoformat(),
                    "action": {
                        "type": "Http",
                        "request": {"uri": f"{http_target.url}/{name}", "method": "POST", "body": name},
                    },
                }
            },
        )
        assert answer.status_code == 201, answer.text
    http_target.wait_for(len(fired), 40)
    assert Counter(r.path for r in http_target.requests) == Counter(f"/{name}" for name in fired)
    for name in fired:  # history is written once every action of the batch went out: wait for it
        deadline = time.monotonic() + 15
        while True:
            history = requests.get(f"{base}/{name}/jobs/once/history", params=V, timeout=10).json()["value"]
            if history or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert [h["properties"]["status"] for h in history] == ["Completed"]
