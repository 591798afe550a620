"""What the firing benchmarks share: the real app under the local host (a subprocess, as `make run` runs it)
against an Azurite of its own in memory, its storage behind a counting proxy (bench/storage_meter.py), local
targets in a process of their own (bench/targets.py), and the API calls that create the load.

Storage requests are counted on the wire for everything the app does (the host's queue polling, the minute
timer, the dispatch tasks, the executor); function invocations are counted from the host's log.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import cpu_seconds  # noqa: E402
from bench.storage_meter import StorageMeter  # noqa: E402
from bench.targets import Targets  # noqa: E402
from bench.tls import make_pki  # noqa: E402
from devhost.azurite import Azurite, free_port  # noqa: E402

GROUP = "/subscriptions/bench/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections"
VERSION = "?api-version=2016-03-01"
# The functions an execution costs: the executor, the dispatch queue trigger and the minute timer (HTTP is the
# benchmark's own job creation and state changes).
PIPELINE = ("executor", "dispatch", "dispatcher")


def request(method: str, url: str, body: object | None = None, timeout: float = 60) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def kinds_line(kinds: Counter[str], executions: int) -> str:
    """Storage requests by kind, per execution, largest first."""
    return ", ".join(f"{kind} {count / max(executions, 1):.2f}" for kind, count in kinds.most_common() if count)


def lateness_line(values: list[float]) -> str:
    if not values:
        return "nothing arrived"
    return (
        f"p50 {statistics.median(values):.3f} s, p99 {percentile(values, 0.99):.3f} s, max {max(values):.3f} s, "
        f"min {min(values):.3f} s"
    )


def lateness_figures(values: list[float]) -> dict[str, float]:
    """What `lateness_line` prints, for bench/figures.py (seconds; empty when nothing arrived)."""
    if not values:
        return {}
    return {
        "p50": round(statistics.median(values), 4),
        "p99": round(percentile(values, 0.99), 4),
        "max": round(max(values), 4),
        "min": round(min(values), 4),
    }


def per_execution(count: float, executions: int, digits: int = 4) -> float | None:
    """`count` per execution, for bench/figures.py (None without executions, never a division by a guess)."""
    return round(count / executions, digits) if executions else None


def pause_until(instant: datetime) -> bool:
    """Sleep until `instant`; False when it had passed already (a window that started late)."""
    delay = (instant - datetime.now(UTC)).total_seconds()
    if delay > 0:
        time.sleep(delay)
    return delay > -0.5


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Harness:
    """Azurite, the meter, the targets and the local host; a context manager that stops them all."""

    def __init__(
        self,
        folder: Path,
        hosts: dict[str, float | None],
        https: dict[str, float | None] | None = None,
        env: dict[str, str] | None = None,
        workers: int = 1,
        per_function_scaling: bool = False,
    ) -> None:
        self.folder = folder
        self.hosts, self.https, self.extra_env = hosts, https or {}, env or {}
        self.workers = workers  # FUNCTIONS_WORKER_PROCESS_COUNT: the local host's worker processes (devhost/workers.py)
        # DEVHOST_PER_FUNCTION_SCALING: the HTTP functions in `workers` processes of their own, apart from the queue
        # and timer functions' `workers` (devhost/per_function_scaling.py), as Flex Consumption scales them.
        self.per_function_scaling = per_function_scaling
        self._stack = ExitStack()
        self.log_path = folder / "host.log"

    def __enter__(self) -> Harness:
        try:
            azurite = self._stack.enter_context(Azurite(self.folder / "azurite", in_memory=True))
            self.azurite = azurite
            self.meter = StorageMeter(azurite.connection_string)
            self._stack.callback(self.meter.close)
            cert = None
            ca_file = None
            if self.https:
                ca_file, cert_file, key_file = make_pki(self.folder)
                cert = (cert_file, key_file)
            self.targets = Targets(self.hosts, self.folder, self.https, cert).start()
            self._stack.callback(self.targets.stop)
            port = free_port()
            env = {
                **os.environ,
                "AzureWebJobsStorage": self.meter.connection_string,
                "SCHEDULER_PRIVATE_TARGETS": "loopback",
                "PYTHONUNBUFFERED": "1",
                "FUNCTIONS_WORKER_PROCESS_COUNT": str(self.workers),
                # Always set: a value left in the caller's shell would otherwise change what is measured.
                "DEVHOST_PER_FUNCTION_SCALING": "1" if self.per_function_scaling else "0",
                **self.extra_env,
            }
            if ca_file is not None:
                env["SCHEDULER_TRUSTED_CA_FILE"] = str(ca_file)
            log = self.log_path.open("wb")
            self._stack.callback(log.close)
            self.host = subprocess.Popen(
                [sys.executable, "-m", "devhost", "--port", str(port), "--in-process"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            self._stack.callback(self._stop_host)
            self.base = f"http://127.0.0.1:{port}/api"
            self._wait_until_up()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _stop_host(self) -> None:
        self.host.terminate()
        try:
            self.host.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.host.kill()
            self.host.wait()

    def _wait_until_up(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.host.poll() is not None:
                raise SystemExit(f"the local host exited with {self.host.returncode}; see {self.log_path}")
            try:
                status, _ = request("GET", f"{self.base}{GROUP}/probe{VERSION}", timeout=5)
                if status in (200, 404):
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit("the local host did not come up")

    # -- the API ------------------------------------------------------------------------------------------------

    def collection(self, name: str) -> None:
        status, body = request(
            "PUT",
            f"{self.base}{GROUP}/{name}{VERSION}",
            {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
        )
        assert status in (200, 201), body

    def create_jobs(self, jobs: Iterable[tuple[str, str, dict[str, Any]]], threads: int = 8) -> float:
        """PUT every (collection, job, properties); the seconds it took. Raises when a PUT fails."""

        def put(item: tuple[str, str, dict[str, Any]]) -> int:
            collection, name, properties = item
            url = f"{self.base}{GROUP}/{collection}/jobs/{name}{VERSION}"
            return request("PUT", url, {"properties": properties})[0]

        items = list(jobs)
        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            statuses = list(pool.map(put, items))
        failed = len(items) - statuses.count(201) - statuses.count(200)
        if failed:
            raise SystemExit(f"{failed} of {len(items)} job PUTs failed: {sorted(set(statuses))}")
        return time.perf_counter() - started

    def post(self, collection: str, operation: str) -> tuple[int, float, datetime]:
        """POST enable/disable (or DELETE when operation is "delete"): status, seconds, when it answered."""
        started = time.perf_counter()
        if operation == "delete":
            status, _ = request("DELETE", f"{self.base}{GROUP}/{collection}{VERSION}")
        else:
            status, _ = request("POST", f"{self.base}{GROUP}/{collection}/{operation}{VERSION}")
        return status, time.perf_counter() - started, datetime.now(UTC)

    # -- what it cost -----------------------------------------------------------------------------------------

    def requests(self) -> int:
        return self.meter.requests

    def kinds(self) -> Counter[str]:
        return self.meter.kinds()

    def invocations(self) -> int:
        text = self.log_path.read_text(errors="replace")
        return sum(text.count(f"Executed 'Functions.{name}' (") for name in PIPELINE)

    def host_cpu_seconds(self) -> float:
        """The local host's CPU seconds so far (user and system), its worker processes' included: a phase's figure
        is the difference."""
        return self._over_host(cpu_seconds)

    def storage_cpu_seconds(self) -> float:
        """Azurite's CPU seconds so far: a phase's figure is the difference. Azurite answers on one thread (Node),
        so a phase whose storage CPU nears its seconds was bound by the emulator, not by the app's host."""
        assert self.azurite.pid is not None
        return cpu_seconds(self.azurite.pid)

    def host_rss_mb(self) -> float:
        return self._over_host(rss_mb)

    def _over_host(self, measure: Callable[[int], float]) -> float:
        """`measure` of the host process plus its children's (with `workers` > 1 or per-function scaling: the
        worker processes and multiprocessing's resource tracker; none otherwise)."""
        total = measure(self.host.pid)
        for task in Path(f"/proc/{self.host.pid}/task").glob("*/children"):
            for pid in task.read_text().split():
                try:
                    total += measure(int(pid))
                except OSError:  # exited since; once reaped, its CPU is in the host's own (cutime)
                    continue
        return total


def one_shot(due: datetime, url: str) -> dict[str, Any]:
    """A job that POSTs to `url` once, at `due`, without retries."""
    return {
        "startTime": due.isoformat(),
        "action": {
            "type": "Http",
            "request": {"uri": url, "method": "POST", "body": "fire"},
            "retryPolicy": {"retryType": "None"},
        },
    }


def every_minute(start: datetime, url: str) -> dict[str, Any]:
    """A job that POSTs to `url` every minute from `start` (its second is start's), without retries."""
    return {
        "startTime": start.isoformat(),
        "recurrence": {"frequency": "Minute", "interval": 1},
        "action": {
            "type": "Http",
            "request": {"uri": url, "method": "POST", "body": "fire"},
            "retryPolicy": {"retryType": "None"},
        },
    }


def next_minute(after: datetime, lead: timedelta) -> datetime:
    """The first whole minute at least `lead` after `after`."""
    return (after + lead + timedelta(minutes=1)).replace(second=0, microsecond=0)
