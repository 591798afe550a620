"""Polling survives a host killed while it polls: the real app under `python -m devhost` (tests/support/crash.py)
on its own Azurite, an Http job with request.asyncCompletion whose target answers 202 + Location; the host's whole
process group is killed (SIGKILL) after its second poll, started again, and the polling goes on from the queued
poll's message: the action itself is never sent again (one POST at the target), and the occurrence ends once in
history with the work's final status."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

from devhost.azurite import Azurite
from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, JobExecutionStatus
from shared.settings import Settings
from shared.store import Store
from tests.executor.peers.servers import Hit, serve
from tests.support.crash import COLLECTION, CrashingHost, crash_environment

POLLS = 5
PATIENCE = 120.0


def test_a_host_killed_while_polling_resumes_polling_without_firing_the_action_again(
    azurite_of_its_own: Azurite, tmp_path: Path
) -> None:
    lock = threading.Lock()

    def answer(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        if hit.method == "POST":
            return 202, {"Location": "/status/1", "Retry-After": "1"}, b"accepted"
        with lock:
            gets = sum(1 for h in target.hits if h.method == "GET")
        if gets >= POLLS:
            return 200, {"Content-Type": "text/plain"}, b"the work is done"
        return 202, {"Location": "/status/1", "Retry-After": "1"}, b"still working"

    target = serve(answer)
    env = crash_environment(azurite_of_its_own, "poll")
    host = CrashingHost(env, tmp_path / "host.log")
    host.start()
    try:
        created = requests.put(
            f"{host.url}/{COLLECTION}",
            params={"api-version": PREVIEW_API_VERSION},
            timeout=10,
            json={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
        )
        assert created.status_code == 201, created.text
        start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=5)
        job = requests.put(
            f"{host.url}/{COLLECTION}/jobs/polled",
            params={"api-version": PREVIEW_API_VERSION},
            timeout=10,
            json={
                "properties": {
                    "startTime": start.isoformat(),
                    "action": {
                        "type": "Http",
                        "request": {"uri": f"{target.url}/work", "method": "POST", "asyncCompletion": {}},
                        "retryPolicy": {"retryType": "None"},
                    },
                }
            },
        )
        assert job.status_code == 201, job.text
        deadline = time.monotonic() + PATIENCE
        while sum(1 for h in target.hits if h.method == "GET") < 2:
            assert time.monotonic() < deadline, host.log.read_text()[-3000:]
            time.sleep(0.05)
        host.kill()  # while the work is polled: its next poll's message is queued
        killed_after = sum(1 for h in target.hits if h.method == "GET")
        time.sleep(2)
        host.start()
        store = Store.from_settings(Settings.from_environment(env))
        key = JobKey("s1", "rg", "crash", "polled")
        deadline = time.monotonic() + PATIENCE
        while True:
            history, _ = store.history.page(key, None, 10)
            if history:
                break
            assert time.monotonic() < deadline, host.log.read_text()[-3000:]
            time.sleep(0.5)
        time.sleep(3)  # a duplicate would show now
        history, _ = store.history.page(key, None, 10)
        posts = [h for h in target.hits if h.method == "POST"]
        gets = [h for h in target.hits if h.method == "GET"]
        print(f"POSTs at the target: {len(posts)}; polls: {len(gets)} ({killed_after} before the kill)")
        assert len(posts) == 1
        assert len(gets) >= POLLS and killed_after < POLLS
        assert [h.status for h in history] == [JobExecutionStatus.COMPLETED]
        assert "the work is done" in history[0].message
        entries, _ = store.history.ledger_page(key, None, None, None, 10)
        assert [e.status for e in entries] == [JobExecutionStatus.COMPLETED]
    finally:
        host.stop()
        target.close()
