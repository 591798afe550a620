"""Three hosts of the real app, four due-index shards, one Azurite: every occurrence fires exactly once.

Each host is `python -m devhost` serving the deployed function_app.py: its API, its minute timer (all
three fire it, a stronger case than the cloud's singleton timer), the dispatch queue trigger and the
occurrence queue trigger. Jobs are created through all three APIs, due beyond the API's fast path, so the
timers' fan-out and the dispatchers on whichever host takes a task queue them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

from devhost.azurite import Azurite, free_port
from shared.dispatcher import dispatch_horizon

ROOT = Path(__file__).resolve().parents[2]
COLLECTION = "subscriptions/s1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/multihost"
V = {"api-version": "2016-03-01"}
HOSTS = 3
JOBS = 90


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[list[str]]:
    with Azurite(tmp_path / "azurite", in_memory=True) as azurite:
        processes, urls = [], []
        try:
            for i in range(HOSTS):
                port = free_port()
                env = {
                    **os.environ,
                    "AzureWebJobsStorage": azurite.connection_string,
                    "SCHEDULER_DUE_SHARDS": "4",
                    "SCHEDULER_PRIVATE_TARGETS": "loopback",
                    "SCHEDULER_TABLE_PREFIX": "multihost",
                }
                log = (tmp_path / f"host{i}.log").open("w")
                process = subprocess.Popen(
                    [sys.executable, "-m", "devhost", "--port", str(port), "--in-process"],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    text=True,
                )
                processes.append(process)
                assert process.stdout is not None
                urls.append(process.stdout.readline().strip())
                assert urls[-1] == f"http://127.0.0.1:{port}/api", urls[-1]
            yield urls
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(timeout=15)


def test_three_hosts_with_four_shards_fire_every_occurrence_exactly_once(hosts: list[str], http_target) -> None:
    created = requests.put(
        f"{hosts[0]}/{COLLECTION}",
        params=V,
        timeout=10,
        json={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
    )
    assert created.status_code == 201, created.text
    # Due after the API's fast-path horizon: only the minute timers' fan-out can queue these.
    first = dispatch_horizon(datetime.now(UTC) + timedelta(seconds=5)) + timedelta(seconds=2)
    expected = {}
    for i in range(JOBS):
        due = first + timedelta(seconds=i % 15)
        name = f"job{i:03d}"
        expected[name] = due.strftime("%Y-%m-%dT%H:%M:%SZ")
        answer = requests.put(
            f"{hosts[i % HOSTS]}/{COLLECTION}/jobs/{name}",
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
    wait = (first - datetime.now(UTC)).total_seconds() + 40
    http_target.wait_for(JOBS, wait)
    time.sleep(3)  # a duplicate would show up now
    received = list(http_target.requests)
    fired = Counter(r.headers["x-ms-scheduler-jobid"] for r in received)
    wrong = {name: n for name, n in fired.items() if n != 1}
    assert fired == Counter(list(expected)), wrong or set(expected) - set(fired)
    for hit in received:
        assert hit.headers["x-ms-scheduler-expected-execution-time"] == expected[hit.headers["x-ms-scheduler-jobid"]]
        assert hit.at >= datetime.fromisoformat(expected[hit.headers["x-ms-scheduler-jobid"]]), "fired early"
    states = {
        requests.get(f"{hosts[1]}/{COLLECTION}/jobs/{name}", params=V, timeout=10).json()["properties"]["state"]
        for name in list(expected)[:10]
    }
    assert states == {"completed"}
