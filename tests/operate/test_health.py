"""GET /api/health on the real function_app.py (local host, real Azurite): anonymous, no secrets, and it
reports storage, the dispatcher's last tick and the backlog. Its rules, asked in process, run on the memory store;
unreachable storage is the Azure SDK's answer, against a closed port."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from devhost.host import LocalHost
from shared import api
from shared.actions import ActionRunner
from shared.clock import SystemClock
from shared.dispatcher import Dispatcher
from shared.executor import Executor
from shared.keys import JobKey
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store import Store
from shared.store.memory import MemoryStorage
from shared.store.storage import Storage
from tests.support.clock import ManualClock
from tests.support.scheduler_client import call, make_collection

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def storage(memory_storage: MemoryStorage) -> Storage | None:
    """The in-process tests' store (`runtime` too); the local host's keep the session's Azurite."""
    return memory_storage


@pytest.fixture
def hosted(azurite, monkeypatch) -> Iterator[LocalHost]:
    monkeypatch.setenv("AzureWebJobsStorage", azurite.connection_string)
    monkeypatch.setenv("SCHEDULER_TABLE_PREFIX", f"h{uuid.uuid4().hex[:10]}")
    with LocalHost(REPO, load_settings=False) as host:
        yield host


def _get(url: str) -> tuple[int, dict[str, Any], str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # no key, no token: anonymous
            text = response.read().decode()
            return response.status, json.loads(text), text
    except urllib.error.HTTPError as error:
        text = error.read().decode()
        return error.code, json.loads(text), text


def test_health_reports_the_last_tick_and_the_backlog_anonymously(hosted: LocalHost, azurite) -> None:
    status, body, text = _get(f"{hosted.base_url}/health")
    assert status == 200 and body["storage"] == {"reachable": True}
    assert body["backlog"] == {
        "overdueOccurrences": 0,
        "oldestOverdueOccurrence": None,
        "oldestOverdueSeconds": None,
        "poisonMessages": 0,
    }

    rt = Runtime.create(Settings.from_environment())  # the hosted app's own tables
    rt.dispatcher.tick()
    make_collection(rt)
    # Overdue (its minute has passed) but younger than two intervals: worth a look, not yet "behind".
    recent = (datetime.now(UTC) - timedelta(seconds=65)).replace(microsecond=0)
    rt.store.due.add(JobKey("sub-1", "rg-1", "jc1", "ghost"), recent, 0)
    rt.store.queue.poison("unreadable")

    status, body, text = _get(f"{hosted.base_url}/health")
    assert status == 200, body
    assert body["status"] == "Degraded"
    assert body["dispatcher"]["ticking"] is True and body["dispatcher"]["behind"] is False
    last = datetime.fromisoformat(body["dispatcher"]["lastTick"])
    assert abs((datetime.now(UTC) - last).total_seconds()) < 120
    assert body["dispatcher"]["lastTickTasks"] > 0
    assert body["backlog"]["overdueOccurrences"] == 1 and body["backlog"]["poisonMessages"] == 1
    assert datetime.fromisoformat(body["backlog"]["oldestOverdueOccurrence"]) == recent
    assert 65 <= body["backlog"]["oldestOverdueSeconds"] < 120
    assert len(body["problems"]) == 2 and "1 message(s) are in the poison queue" in body["problems"]
    assert abs(body["clock"]["skewSecondsAgainstStorage"]) < 5  # Azurite runs on this machine's clock
    assert "AccountKey" not in text and azurite.connection_string not in text and "devstoreaccount1" not in text
    rt.store.queue.poison_client.clear_messages()  # the host's queue names are shared by the session's hosts


def test_a_host_whose_timer_is_switched_off_is_not_spared_its_first_tick(azurite, monkeypatch) -> None:
    """AzureWebJobs.dispatcher.Disabled is app-wide: no instance will tick, so a heartbeat older than two intervals
    is Unhealthy at once, however recently the host started (a fresh host whose timer runs is spared the ticks it
    could not have made yet: tests/api/test_fresh_host_health.py)."""
    monkeypatch.setenv("AzureWebJobsStorage", azurite.connection_string)
    monkeypatch.setenv("SCHEDULER_TABLE_PREFIX", f"h{uuid.uuid4().hex[:10]}")
    monkeypatch.setenv("AzureWebJobs.dispatcher.Disabled", "true")  # the timer never fires: nothing beats
    with LocalHost(REPO, load_settings=False) as host:
        rt = Runtime.create(Settings.from_environment())
        rt.dispatcher.fan_out()  # a heartbeat now
        status, body, _ = _get(f"{host.base_url}/health")
        # Not "Healthy" for sure: the host's queues are shared by every local host of the session's Azurite.
        assert (status, body["dispatcher"]["behind"]) == (200, False), body["problems"]

        stopped = ManualClock(datetime.now(UTC) - timedelta(seconds=150))
        Dispatcher(rt.store, stopped).fan_out()  # the last heartbeat, two and a half intervals ago
        status, body, _ = _get(f"{host.base_url}/health")
    assert status == 503, body
    assert body["status"] == "Unhealthy" and body["storage"] == {"reachable": True}
    assert body["dispatcher"]["behind"] is True and body["dispatcher"]["ticking"] is False
    assert 150 <= body["dispatcher"]["secondsSinceLastTick"] < 240
    assert body["problems"][0].startswith("the dispatcher last ticked 15")


def test_an_occurrence_overdue_for_two_intervals_means_behind(settings: Settings, storage: Storage | None) -> None:
    clock = ManualClock(datetime.now(UTC))
    rt = Runtime.create(settings, clock, storage=storage)
    health = _health(rt)  # a store made ready moments ago, never ticked: not behind yet
    assert (health.status, health.body["status"]) == (200, "Degraded")
    assert health.body["problems"] == ["the dispatcher has never ticked"]

    rt.dispatcher.tick()
    old = (clock.now() - timedelta(minutes=30)).replace(microsecond=0)
    rt.store.due.add(JobKey("sub-1", "rg-1", "jc1", "ghost"), old, 0)
    health = _health(rt)
    assert health.status == 503 and health.body["dispatcher"]["behind"] is True
    assert health.body["dispatcher"]["ticking"] is True  # ticking, and still behind
    assert health.body["backlog"]["oldestOverdueSeconds"] >= 1800

    rt.dispatcher.tick()  # the entry (of no job) is swept
    assert _health(rt).status == 200

    clock.advance(timedelta(minutes=3))
    assert _health(rt).status == 503  # no heartbeat for three minutes


def _health(rt: Runtime) -> api.ApiResponse:
    return api.handle("Health_Get", api.ApiRequest("GET", "http://127.0.0.1/api/health", {}, {}), rt)


def test_healthy_after_a_tick_with_nothing_overdue(runtime: Runtime) -> None:
    make_collection(runtime)
    call(
        runtime,
        "Jobs_CreateOrUpdate",
        "PUT",
        "later",
        {
            "properties": {
                "startTime": (datetime.now(UTC) + timedelta(hours=1)).isoformat(),
                "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
            }
        },
    )
    runtime.dispatcher.tick()
    response = _health(runtime)
    assert response.status == 200 and response.body["status"] == "Healthy", response.body
    assert response.body["problems"] == []
    assert response.headers["Cache-Control"] == "no-store"


def test_unreachable_storage_is_503_and_says_nothing_more(settings: Settings) -> None:
    with socket.socket() as closed:  # a loopback port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    text = (
        f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;"
        f"TableEndpoint=http://127.0.0.1:{port}/devstoreaccount1;QueueEndpoint=http://127.0.0.1:{port}/devstoreaccount1;"
    )
    down = replace(settings, storage=StorageSettings(connection_string=text))
    store = Store.from_settings(down)  # built without touching storage, as a cold start would
    rt = Runtime(
        down,
        SystemClock(),
        store,
        Dispatcher(store, SystemClock()),
        Executor(store, SystemClock(), ActionRunner.from_settings(down), down),
    )
    response = api.handle("Health_Get", api.ApiRequest("GET", "http://127.0.0.1/api/health", {}, {}), rt)
    assert response.status == 503
    assert response.body == {"status": "Unhealthy", "storage": {"reachable": False}}
