"""Three hosts of the real app, four due-index shards, one Azurite: every occurrence fires exactly once.

Each host is `python -m devhost` serving the deployed function_app.py: its API, its minute timer (all
three fire it, a stronger case than the cloud's singleton timer), the dispatch queue trigger and the
occurrence queue trigger. Jobs are created through all three APIs, due beyond the API's fast path, so the
timers' fan-out and the dispatchers on whichever host takes a task queue them.

The hosts share one clock of their own (tests/support/host_clock.py): it reads about second 45 of a minute when they
serve, so the jobs' first second comes about 77 s after their creation, where the real minute made it 67-127 s.
Every instant the hosts see is reckoned on it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

import pytest
import requests

from devhost.azurite import Azurite, free_port
from shared.dispatcher import dispatch_horizon
from tests.support.host_clock import HostClock

ROOT = Path(__file__).resolve().parents[2]
COLLECTION = "subscriptions/s1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/multihost"
V = {"api-version": "2016-03-01"}
HOSTS = 3
JOBS = 90


class Hosts(NamedTuple):
    urls: list[str]
    clock: HostClock  # the hosts' clock, one for all three


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[Hosts]:
    with Azurite(tmp_path / "azurite", in_memory=True) as azurite:
        # Second 45 when the jobs are created, once the three hosts (started together) serve, about 2 s from now:
        # 10 s before the minute after which the jobs' minute is the first beyond the API's fast path (the
        # creation takes about 3 s). A host slow to start costs a minute, as a late real second did.
        clock = HostClock.reading(second=45, within=2)
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
                    **clock.setting(),
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
                processes.append((process, port))
            for process, port in processes:
                assert process.stdout is not None
                urls.append(process.stdout.readline().strip())  # each prints its base URL once it serves
                assert urls[-1] == f"http://127.0.0.1:{port}/api", urls[-1]
            yield Hosts(urls, clock)
        finally:
            for process, _ in processes:
                process.terminate()
            for process, _ in processes:
                process.wait(timeout=15)


def test_three_hosts_with_four_shards_fire_every_occurrence_exactly_once(hosts: Hosts, http_target) -> None:
    urls, clock = hosts
    created = requests.put(
        f"{urls[0]}/{COLLECTION}",
        params=V,
        timeout=10,
        json={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
    )
    assert created.status_code == 201, created.text
    # Due after the API's fast-path horizon: only the minute timers' fan-out can queue these.
    creating = clock.now()
    first = dispatch_horizon(creating + timedelta(seconds=5)) + timedelta(seconds=2)
    expected = {}
    for i in range(JOBS):
        due = first + timedelta(seconds=i % 15)
        name = f"job{i:03d}"
        expected[name] = due.strftime("%Y-%m-%dT%H:%M:%SZ")
        answer = requests.put(
            f"{urls[i % HOSTS]}/{COLLECTION}/jobs/{name}",
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
    print(f"created from {creating:%H:%M:%S.%f} to {clock.now():%H:%M:%S.%f} on the hosts' clock, due from {first}")
    wait = (first - clock.now()).total_seconds() + 40
    http_target.wait_for(JOBS, wait)
    time.sleep(3)  # a duplicate would show up now
    received = list(http_target.requests)
    fired = Counter(r.headers["x-ms-scheduler-jobid"] for r in received)
    wrong = {name: n for name, n in fired.items() if n != 1}
    assert fired == Counter(list(expected)), wrong or set(expected) - set(fired)
    for hit in received:
        assert hit.headers["x-ms-scheduler-expected-execution-time"] == expected[hit.headers["x-ms-scheduler-jobid"]]
        fired_at = clock.host_time(hit.at)
        assert fired_at >= datetime.fromisoformat(expected[hit.headers["x-ms-scheduler-jobid"]]), "fired early"
    states = {
        requests.get(f"{urls[1]}/{COLLECTION}/jobs/{name}", params=V, timeout=10).json()["properties"]["state"]
        for name in list(expected)[:10]
    }
    assert states == {"completed"}
