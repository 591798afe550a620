"""Crash recovery in seconds: a host killed (SIGKILL) while holding occurrences, restarted 5 s later.

The real app runs under `python -m devhost` on its own Azurite. Thirty one-shot jobs fall due over a few
seconds against a target that takes 1.5 s to answer, so when the host is killed it holds messages in
every stage: received and waiting for their second, claimed, firing. Their queue messages stay hidden
for the host's 10-minute receive visibility; the attempts' watchdogs (shared/leases.py) bring them back.
The second test does the same to one batch message (what the dispatcher writes for a same-second herd)
whose first half has fired and whose second half waits for its second when the host dies.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from azure.storage.queue import QueueClient

from devhost.azurite import Azurite, free_port
from shared.keys import JobKey
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.settings import OCCURRENCE_QUEUE, Settings
from shared.store import Store
from shared.store.queue import base64_text

ROOT = Path(__file__).resolve().parents[2]
COLLECTION = "subscriptions/s1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/crash"
V = {"api-version": "2016-03-01"}
JOBS = 30


class SlowTarget:
    def __init__(self) -> None:
        self.arrivals: list[tuple[str, float]] = []
        arrivals = self.arrivals

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                arrivals.append((self.path.strip("/"), time.monotonic()))
                time.sleep(1.5)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class Host:
    def __init__(self, env: dict[str, str], port: int, log: Path) -> None:
        self.log = log.open("a")
        self.process = subprocess.Popen([sys.executable, "-m", "devhost", "--port", str(port), "--in-process"],
                                        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)
        self.log.close()


@pytest.fixture
def azurite_of_its_own(tmp_path: Path) -> Iterator[Azurite]:
    with Azurite(tmp_path / "azurite", in_memory=True) as azurite:
        yield azurite


def test_occurrences_held_by_a_killed_host_run_within_seconds_of_a_restart(azurite_of_its_own: Azurite,
                                                                           tmp_path: Path) -> None:
    target = SlowTarget()
    port = free_port()
    env = {**os.environ, "AzureWebJobsStorage": azurite_of_its_own.connection_string,
           "SCHEDULER_ALLOW_PRIVATE_TARGETS": "true", "SCHEDULER_TABLE_PREFIX": "crash"}
    host = Host(env, port, tmp_path / "host.log")
    restarted: Host | None = None
    try:
        assert requests.put(f"{host.url}/{COLLECTION}", params=V, timeout=10, json={
            "location": "West US", "properties": {"sku": {"name": "P20Premium"}}}).status_code == 201
        first = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=6)
        for i in range(JOBS):  # due within the API's fast path: the API itself queues them
            due = first + timedelta(seconds=i % 5)
            answer = requests.put(f"{host.url}/{COLLECTION}/jobs/job{i:02d}", params=V, timeout=10, json={
                "properties": {"startTime": due.isoformat(), "action": {
                    "type": "Http", "request": {"uri": f"{target.url}/job{i:02d}", "method": "POST", "body": "x"},
                    "retryPolicy": {"retryType": "None"}}}})
            assert answer.status_code == 201, answer.text
        # Kill while the last second's occurrences are in the host's hands (received, claimed or firing).
        time.sleep(max((first + timedelta(seconds=2, milliseconds=800) - datetime.now(UTC)).total_seconds(), 0))
        host.kill()
        before_kill = Counter(name for name, _ in target.arrivals)
        time.sleep(5)
        restarted = Host(env, port, tmp_path / "host.log")
        back = time.monotonic()
        deadline = back + 30
        while time.monotonic() < deadline and len({n for n, _ in target.arrivals}) < JOBS:
            time.sleep(0.2)
        time.sleep(2)  # a duplicate would show up now
        fired = Counter(name for name, _ in target.arrivals)
        assert set(fired) == {f"job{i:02d}" for i in range(JOBS)}, sorted(set(fired))
        # Only an action that had fired when the host died may run again (at-least-once), and only once more.
        twice = {name for name, count in fired.items() if count > 1}
        assert twice <= set(before_kill), (twice, before_kill)
        assert all(count <= 2 for count in fired.values()), fired
        held = [at - back for name, at in target.arrivals if name not in before_kill]
        assert held and max(held) <= 30
        print(f"held {len(held)} occurrence(s) ran {min(held):.1f}-{max(held):.1f} s after the restart; "
              f"{len(twice)} fired before the kill ran again")
    finally:
        host.stop()
        if restarted is not None:
            restarted.stop()
        target.server.shutdown()


def test_a_batch_held_by_a_killed_host_runs_every_occurrence_and_none_twice_unless_it_had_fired(
        azurite_of_its_own: Azurite, tmp_path: Path) -> None:
    target = SlowTarget()
    port = free_port()
    env = {**os.environ, "AzureWebJobsStorage": azurite_of_its_own.connection_string,
           "SCHEDULER_ALLOW_PRIVATE_TARGETS": "true", "SCHEDULER_TABLE_PREFIX": "crashbatch"}
    host = Host(env, port, tmp_path / "host.log")
    restarted: Host | None = None
    try:
        assert requests.put(f"{host.url}/{COLLECTION}", params=V, timeout=10, json={
            "location": "West US", "properties": {"sku": {"name": "P20Premium"}}}).status_code == 201
        later = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
        for i in range(JOBS):  # due tomorrow: neither the API nor the timer queues them during the test
            answer = requests.put(f"{host.url}/{COLLECTION}/jobs/job{i:02d}", params=V, timeout=10, json={
                "properties": {"startTime": later.isoformat(), "action": {
                    "type": "Http", "request": {"uri": f"{target.url}/job{i:02d}", "method": "POST", "body": "x"},
                    "retryPolicy": {"retryType": "None"}}}})
            assert answer.status_code == 201, answer.text
        store = Store.from_settings(Settings.from_environment(env))
        first = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=4)
        items = []
        for i in range(JOBS):  # half due at `first`, half two seconds later, in one message
            key = JobKey("s1", "rg", "crash", f"job{i:02d}")
            job = store.jobs.get(key)
            assert job is not None
            due = first + timedelta(seconds=0 if i < JOBS // 2 else 2)
            items.append(OccurrenceMessage(key, due, due, generation=job.generation))
        queue = QueueClient.from_connection_string(azurite_of_its_own.connection_string, OCCURRENCE_QUEUE,
                                                   **base64_text())
        queue.send_message(OccurrenceBatch(tuple(items)).to_json())
        # Kill while the first half is firing (the target takes 1.5 s) and the second half waits, claimed.
        time.sleep(max((first + timedelta(milliseconds=800) - datetime.now(UTC)).total_seconds(), 0))
        host.kill()
        before_kill = Counter(name for name, _ in target.arrivals)
        assert before_kill and len(before_kill) <= JOBS // 2, before_kill  # it died mid-batch
        time.sleep(5)
        restart = time.monotonic()  # from the spawn, so the host's own start-up counts against the bound
        restarted = Host(env, port, tmp_path / "host.log")
        # Waits past the bound so that a miss reports how late it ran, not only that it had not yet.
        deadline = restart + 40
        while time.monotonic() < deadline and len({n for n, _ in target.arrivals}) < JOBS:
            time.sleep(0.2)
        time.sleep(2)  # a duplicate would show up now
        fired = Counter(name for name, _ in target.arrivals)
        assert set(fired) == {f"job{i:02d}" for i in range(JOBS)}, sorted(set(fired))
        twice = {name for name, count in fired.items() if count > 1}
        assert twice <= set(before_kill), (twice, before_kill)  # only what had fired may run again
        assert all(count <= 2 for count in fired.values()), fired
        # Issue 16's bound: every occurrence the dead host held (had not fired) runs within 30 s of the restart.
        held = {name: at - restart for name, at in target.arrivals if name not in before_kill}
        assert len(held) == JOBS - len(before_kill)
        assert max(held.values()) <= 30, sorted(held.items(), key=lambda item: item[1])[-5:]
        print(f"held {len(held)} occurrence(s) ran {min(held.values()):.1f}-{max(held.values()):.1f} s after "
              f"the restart; {len(twice)} fired before the kill ran again")
    finally:
        host.stop()
        if restarted is not None:
            restarted.stop()
        target.server.shutdown()
