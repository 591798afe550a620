"""End to end through the real local host: the deployed function_app.py, its HTTP routes, its minute timer
and its queue trigger, against Azurite and a local HTTP target. Nothing is called in-process."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import requests

from tests.support.local_host import local_host

COLLECTION = "subscriptions/s1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/e2e"
V = {"api-version": "2016-03-01"}


@pytest.fixture(scope="module")
def host_url(azurite) -> Iterator[str]:
    with local_host(azurite) as base:
        created = requests.put(
            f"{base}/{COLLECTION}",
            params=V,
            timeout=10,
            json={"location": "West US", "properties": {"sku": {"name": "Standard"}}},
        )
        assert created.status_code in (200, 201), created.text
        yield base


def test_http_job_fires_on_the_second(host_url: str, http_target) -> None:
    due = (datetime.now(UTC) + timedelta(seconds=5)).replace(microsecond=0)
    job_url = f"{host_url}/{COLLECTION}/jobs/ping"
    put = requests.put(
        job_url,
        params=V,
        timeout=10,
        json={
            "properties": {
                "startTime": due.isoformat(),
                "action": {
                    "type": "Http",
                    "request": {"uri": f"{http_target.url}/ping", "method": "POST", "body": "payload"},
                },
            }
        },
    )
    assert put.status_code == 201, put.text
    received = http_target.wait_for(1, 12)
    time.sleep(1.5)  # a duplicate would show up now
    assert len(http_target.requests) == 1
    hit = received[0]
    assert abs((hit.at - due).total_seconds()) <= 2, (hit.at, due)
    assert hit.body == b"payload"
    assert hit.headers["x-ms-scheduler-jobid"] == "ping"
    assert hit.headers["x-ms-scheduler-jobcollectionid"] == "e2e"
    assert hit.headers["x-ms-scheduler-expected-execution-time"] == due.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert hit.headers["x-ms-scheduler-execution-region"] == "local"
    assert hit.headers["x-ms-scheduler-attempt"] == "1"
    assert hit.headers["x-ms-execution-tag"] and hit.headers["x-ms-client-request-id"]
    deadline = time.monotonic() + 5
    while True:
        job = requests.get(job_url, params=V, timeout=10).json()["properties"]
        if job["state"] == "completed" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert job["state"] == "completed"
    assert job["status"]["executionCount"] == 1
    assert job["status"]["lastExecutionTime"]
    history = requests.get(f"{job_url}/history", params=V, timeout=10).json()["value"]
    assert [h["properties"]["status"] for h in history] == ["Completed"]
    assert history[0]["properties"]["expectedExecutionTime"] == due.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_errors_are_arm_shaped_and_store_nothing(host_url: str) -> None:
    action = {"type": "Http", "request": {"uri": "http://x/", "method": "GET"}}
    missing = requests.put(
        f"{host_url}/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/nope/jobs/j",
        params=V,
        timeout=10,
        json={"properties": {"action": action}},
    )
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "ResourceNotFound"
    bad = requests.put(
        f"{host_url}/{COLLECTION}/jobs/broken",
        params=V,
        timeout=10,
        data=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert bad.status_code == 400
    assert set(bad.json()["error"]) == {"code", "message"}
    assert requests.get(f"{host_url}/{COLLECTION}/jobs/broken", params=V, timeout=10).status_code == 404
