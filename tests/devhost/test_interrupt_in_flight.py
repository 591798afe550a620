"""Ctrl-C on `python -m devhost` (what `make run` runs) while a job's action is in flight: the project's own
function_app.py as a subprocess, a job calling a slow local HTTP target, SIGINT once the target holds the request.
The host stops quietly: exit status 0, no traceback, one line naming what was cut short."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import requests

from devhost.azurite import Azurite, free_port
from tests.executor.peers.servers import ok, serve

from .test_cli import REPO_ROOT, read_line

SLOW_SECONDS = 30.0  # the target answers long after the host has stopped: the action is cut short, not finished
COLLECTION = "/subscriptions/int-sub/resourceGroups/int-rg/providers/Microsoft.Scheduler/jobCollections/int-jc"
V = {"api-version": "2016-03-01"}


def test_ctrl_c_with_an_action_in_flight_stops_quietly_naming_it(azurite: Azurite) -> None:
    target = serve(ok, delay=SLOW_SECONDS)
    port = free_port()
    env = {
        **os.environ,
        "AzureWebJobsStorage": azurite.connection_string,
        "SCHEDULER_TABLE_PREFIX": f"i{uuid.uuid4().hex[:10]}",
        "SCHEDULER_PRIVATE_TARGETS": "loopback",
        "REGION_NAME": "local",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "devhost", "--port", str(port)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = read_line(process, timeout=60)
        assert base == f"http://127.0.0.1:{port}/api"
        made = requests.put(f"{base}{COLLECTION}", params=V, json={"location": "westeurope"}, timeout=10)
        assert made.status_code in (200, 201), made.text
        job = {"properties": {"action": {"type": "Http", "request": {"uri": f"{target.url}/slow", "method": "GET"}}}}
        made = requests.put(f"{base}{COLLECTION}/jobs/slow", params=V, json=job, timeout=10)
        assert made.status_code in (200, 201), made.text
        deadline = time.monotonic() + 60
        while not target.hits and time.monotonic() < deadline:  # a job without a recurrence runs once, now
            time.sleep(0.1)
        assert target.hits, "the action never reached the target"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        target.close()
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr and "CancelledError" not in stderr, stderr
    cut = [line for line in stderr.splitlines() if "cut short" in line]
    assert len(cut) == 1 and "Functions." in cut[0], stderr
