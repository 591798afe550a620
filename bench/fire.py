"""How precisely and how fast the scheduler fires: N one-shot jobs due in the same minute.

Runs the real app under the local host (a subprocess, as `make run` does) against its own Azurite,
creates the jobs far enough ahead that the minute timer (not the API) queues them, and records when
each request reaches a local HTTP target. Two phases, with the same host:

- spread: N jobs due across one minute (N/60 per second), the load a minute's due set puts on it;
- burst: N jobs due at the same second, which measures capacity (executions per second).

Prints, per phase, fired count, duplicates, lost, lateness p50/p99/max, and for the burst the
executions per second beside Azurite's raw single-operation throughput measured in the same run.

    python bench/fire.py [--jobs 500]

Targets (issue 2): p99 lateness <= 1 s, no lost or duplicate execution, executions/s >= 1/6 of raw
storage operations/s. A figure, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from azure.data.tables import TableServiceClient  # noqa: E402

from devhost.azurite import Azurite, free_port  # noqa: E402

COLLECTION = "/subscriptions/bench/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/fire"
VERSION = "?api-version=2016-03-01"


class Target:
    """A local HTTP server recording (job id, arrival time) of every scheduler call."""

    def __init__(self) -> None:
        self.arrivals: list[tuple[str, str, datetime]] = []
        lock = threading.Lock()
        arrivals = self.arrivals

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                at = datetime.now(UTC)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with lock:
                    arrivals.append((self.headers["x-ms-scheduler-jobid"],
                                     self.headers["x-ms-scheduler-expected-execution-time"], at))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/fire"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def request(method: str, url: str, body: object | None = None) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def raw_storage_ops_per_second(connection_string: str, seconds: float = 3.0) -> float:
    """Sequential single-entity upserts against the same Azurite: the storage's raw unit of work."""
    table = TableServiceClient.from_connection_string(connection_string).create_table_if_not_exists("benchraw")
    done, deadline = 0, time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        table.upsert_entity({"PartitionKey": "p", "RowKey": str(done % 500), "Value": done})
        done += 1
    return done / (time.perf_counter() - start)


def wait_until_up(base: str, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the local host exited with {process.returncode}")
        try:
            status, _ = request("GET", f"{base}{COLLECTION}{VERSION}")
            if status in (200, 404):
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("the local host did not come up")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--dump", type=Path, help="write every arrival (job, due, arrival) as JSON lines here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, Azurite(Path(tmp), in_memory=True) as azurite:
        raw = raw_storage_ops_per_second(azurite.connection_string)
        target = Target()
        port = free_port()
        env = {**os.environ, "AzureWebJobsStorage": azurite.connection_string,
               "SCHEDULER_ALLOW_PRIVATE_TARGETS": "true", "PYTHONUNBUFFERED": "1"}
        log = open(Path(tmp) / "host.log", "wb")  # noqa: SIM115 - closed after the host stops
        host = subprocess.Popen([sys.executable, "-m", "devhost", "--port", str(port)], cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}/api"
        try:
            wait_until_up(base, host)
            status, body = request("PUT", f"{base}{COLLECTION}{VERSION}", {
                "location": "West US", "properties": {"sku": {"name": "P20Premium"}}})
            assert status in (200, 201), body
            # The spread phase fills the minute after a boundary at least 40 s away; the burst phase is
            # due 20 s into the minute two later. Both are queued by the minute timer, not the API.
            now = datetime.now(UTC)
            tick = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
            if tick - now < timedelta(seconds=40):
                tick += timedelta(minutes=1)
            spread = {f"spread{i}": tick + timedelta(seconds=i % 60) for i in range(args.jobs)}
            burst_due = tick + timedelta(minutes=2, seconds=20)
            burst = {f"burst{i}": burst_due for i in range(args.jobs)}
            plan = spread | burst

            def create(name: str) -> int:
                job = {"properties": {"startTime": plan[name].isoformat(), "action": {"type": "Http", "request": {
                    "uri": target.url, "method": "POST", "body": "fire"}, "retryPolicy": {"retryType": "None"}}}}
                return request("PUT", f"{base}{COLLECTION}/jobs/{name}{VERSION}", job)[0]

            started = time.perf_counter()
            with ThreadPoolExecutor(8) as pool:
                statuses = list(pool.map(create, plan))
            created = time.perf_counter() - started
            print(f"created {statuses.count(201)}/{len(plan)} jobs in {created:.1f} s "
                  f"({len(plan) / created:.0f} PUT/s); spread over {tick:%H:%M}Z, burst at {burst_due:%H:%M:%S}Z")
            deadline = burst_due + timedelta(seconds=60)
            while datetime.now(UTC) < deadline and len(target.arrivals) < len(plan):
                time.sleep(0.2)
            time.sleep(2)  # let late duplicates show up
        finally:
            host.terminate()
            host.wait(timeout=15)
            log.close()

    if args.dump:
        with args.dump.open("w") as out:
            for job, _, at in target.arrivals:
                out.write(json.dumps({"job": job, "due": plan[job].isoformat(), "at": at.isoformat()}) + "\n")
    report("spread", spread, [a for a in target.arrivals if a[0] in spread], raw)
    report("burst", burst, [a for a in target.arrivals if a[0] in burst], raw)


def report(phase: str, plan: dict[str, datetime], arrivals: list[tuple[str, str, datetime]], raw: float) -> None:
    jobs = {job for job, _, _ in arrivals}
    lateness = [(at - plan[job]).total_seconds() for job, _, at in arrivals]
    print(f"[{phase}] fired:      {len(jobs)}/{len(plan)} jobs, {len(arrivals) - len(jobs)} duplicate(s), "
          f"{len(plan) - len(jobs)} lost")
    if not lateness:
        return
    print(f"[{phase}] lateness:   p50 {statistics.median(lateness):.3f} s, p99 {percentile(lateness, 0.99):.3f} s, "
          f"max {max(lateness):.3f} s, min {min(lateness):.3f} s")
    if phase == "burst":
        span = max(at for _, _, at in arrivals) - min(at for _, _, at in arrivals)
        rate = len(arrivals) / max(span.total_seconds(), 1e-3)
        print(f"[{phase}] throughput: {rate:.1f} executions/s (first to last arrival, {span.total_seconds():.2f} s)")
        print(f"[{phase}] storage:    {raw:.1f} raw single-entity operations/s (sequential upserts, same Azurite)")
        print(f"[{phase}] ratio:      executions/s / raw ops/s = {rate / raw:.3f} (target >= {1 / 6:.3f})")


if __name__ == "__main__":
    main()
