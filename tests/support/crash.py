"""What the crash tests and bench/faults.py share: the real app under `python -m devhost` in a process group of
its own, killed whole (SIGKILL) and started again, and a local HTTP target that records every call.

`CrashingHost.kill()` is what an operator's `kill -9` of the host's process group does: no handler runs, nothing
is handed back to the queue, storage sees the connections drop. `start()` spawns a fresh process (the same
port and settings) and returns once it serves, so the time it returns is when a host is able to run work again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

from devhost.azurite import Azurite, free_port

ROOT = Path(__file__).resolve().parents[2]
COLLECTION = "subscriptions/s1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/crash"
V = {"api-version": "2016-03-01"}


def serve_on_loopback(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    """A threaded HTTP server on a free loopback port, serving `handler` on a daemon thread; it and its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class CrashingHost:
    """The local host as a child process in its own process group, which `kill` kills whole."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/api"
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> float:
        """Spawn the host and wait until it serves; the monotonic time it does."""
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "devhost", "--port", str(self.port), "--in-process"],
                cwd=ROOT,
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,
            )
        assert self.process.stdout is not None
        served = self.process.stdout.readline().strip()  # the host prints its base URL once it serves
        assert served == self.url, (served, self.log.read_text()[-2000:])
        return time.monotonic()

    def kill(self) -> float:
        """SIGKILL the host's whole process group; the monotonic time it died."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        return time.monotonic()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()

    def logged(self, text: str) -> bool:
        return text in self.log.read_text(errors="replace")

    def wait_for_log(self, text: str, after: int, within: float) -> None:
        """Until `text` is logged past offset `after` of the host's log (polled every 20 ms)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            with self.log.open(errors="replace") as log:
                log.seek(after)
                if text in log.read():
                    return
            time.sleep(0.02)
        raise AssertionError(f"{text!r} never logged")


class Target:
    """A local HTTP server: records each POST's path and when it arrived (monotonic), answers its first call of a
    path after that path's delay (`slow`; a call again after a crash answers at once, so a stopping host waits
    for no action), and calls `on_answer(name)` right after it answered (a test kills the host there)."""

    def __init__(self, slow: dict[str, float] | None = None, on_answer: Callable[[str], None] | None = None) -> None:
        self.arrivals: list[tuple[str, float]] = []
        self.answers: list[tuple[str, float]] = []
        self.slow = slow or {}
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                name = self.path.strip("/")
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                target.arrivals.append((name, time.monotonic()))
                time.sleep(target.slow.pop(name, 0.0))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                self.wfile.flush()
                target.answers.append((name, time.monotonic()))
                if on_answer is not None:
                    on_answer(name)

            def log_message(self, *args: object) -> None:
                pass

        self.server, self.url = serve_on_loopback(Handler)

    def fired(self) -> Counter[str]:
        return Counter(name for name, _ in self.arrivals)

    def first(self, name: str) -> float | None:
        return next((at for n, at in self.arrivals if n == name), None)

    def wait_for(self, names: set[str], within: float) -> None:
        """Until every name arrived (or `within` seconds passed), then 2 s more: a duplicate would show now."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline and not names <= set(self.fired()):
            time.sleep(0.1)
        time.sleep(2)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def crash_environment(azurite: Azurite, table_prefix: str, **settings: str) -> dict[str, str]:
    """The host's settings: its own Azurite and tables, loopback targets allowed."""
    return {
        **os.environ,
        "AzureWebJobsStorage": azurite.connection_string,
        "SCHEDULER_PRIVATE_TARGETS": "loopback",
        "SCHEDULER_TABLE_PREFIX": table_prefix,
        "PYTHONUNBUFFERED": "1",
        **settings,
    }


def create_one_shot_jobs(url: str, target: Target, starts: dict[str, datetime]) -> None:
    """The collection and one-shot Http jobs (names -> startTime) POSTing to the target's /<name>, no retries."""
    answer = requests.put(
        f"{url}/{COLLECTION}",
        params=V,
        timeout=10,
        json={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
    )
    assert answer.status_code == 201, answer.text

    def create(name: str) -> None:
        answer = requests.put(
            f"{url}/{COLLECTION}/jobs/{name}",
            params=V,
            timeout=10,
            json={
                "properties": {
                    "startTime": starts[name].isoformat(),
                    "action": {
                        "type": "Http",
                        "request": {"uri": f"{target.url}/{name}", "method": "POST", "body": "x"},
                        "retryPolicy": {"retryType": "None"},
                    },
                }
            },
        )
        assert answer.status_code == 201, answer.text

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(create, starts))
