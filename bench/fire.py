"""How precisely and how fast the scheduler fires: one-shot jobs due spread over a minute and in herds.

Runs the real app under the local host (a subprocess, as `make run` does) against its own Azurite,
creates the jobs far enough ahead that the minute timer (not the API) queues them, and records when
each request reaches a local HTTP target. Phases, with the same host, two minutes apart:

- spread: --spread jobs due across one minute, the load a minute's due set puts on it;
- herd N (one per --herd value): N jobs due at the same second, which measures capacity.

The app's storage goes through a counting pass-through proxy (bench/storage_meter.py), so each herd
reports storage requests per execution (everything: the host's queue polling, the dispatcher, the
executor) and function invocations per execution (from the host's log). The raw storage rate is
measured through the same proxy, so the ratio compares like with like; the proxy adds latency to both.

Prints, per phase, fired count, duplicates, lost, early, lateness p50/p99/max; per herd the executions
per second beside the raw single-operation rate measured in the same run.

    python bench/fire.py [--spread 500] [--herd 300 --herd 1000]

Targets (issue 9): herd 300 p99 <= 1 s, herd 1000 p99 <= 2 s, spread p99 <= 0.1 s, exactly once, none
early; executions/s >= 1/3 of raw storage operations/s. A figure, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from azure.data.tables import TableServiceClient  # noqa: E402

from bench.storage_meter import StorageMeter  # noqa: E402
from devhost.azurite import Azurite, free_port  # noqa: E402

GROUP = "/subscriptions/bench/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections"
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
                    arrivals.append(
                        (
                            self.headers["x-ms-scheduler-jobid"],
                            self.headers["x-ms-scheduler-expected-execution-time"],
                            at,
                        )
                    )
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
            status, _ = request("GET", f"{base}{GROUP}/probe{VERSION}")
            if status in (200, 404):
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("the local host did not come up")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


@dataclass
class Phase:
    name: str
    collection: str  # one per phase: a P20Premium collection holds at most 1,000 jobs
    plan: dict[str, datetime]
    herd: bool
    requests_before: int = 0
    requests_after: int = 0
    invocations: int = 0


# The functions an execution costs: the executor, the dispatch queue trigger and the minute timer (HTTP is the
# benchmark's own job creation, before the phases are measured).
PIPELINE = ("executor", "dispatch", "dispatcher")


def count_invocations(log: Path) -> int:
    text = log.read_text(errors="replace")
    return sum(text.count(f"Executed 'Functions.{name}' (") for name in PIPELINE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spread", type=int, default=500)
    parser.add_argument("--herd", type=int, action="append", help="jobs due at one second (repeatable)")
    parser.add_argument("--dump", type=Path, help="write every arrival (job, due, arrival) as JSON lines here")
    args = parser.parse_args()
    herds = args.herd or [300, 1000]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the host and Azurite on a kill

    with tempfile.TemporaryDirectory() as tmp, Azurite(Path(tmp), in_memory=True) as azurite:
        meter = StorageMeter(azurite.connection_string)
        raw = raw_storage_ops_per_second(meter.connection_string)
        target = Target()
        port = free_port()
        env = {
            **os.environ,
            "AzureWebJobsStorage": meter.connection_string,
            "SCHEDULER_ALLOW_PRIVATE_TARGETS": "true",
            "PYTHONUNBUFFERED": "1",
        }
        log_path = Path(tmp) / "host.log"
        log = log_path.open("wb")
        host = subprocess.Popen(
            [sys.executable, "-m", "devhost", "--port", str(port), "--in-process"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}/api"
        phases: list[Phase] = []
        try:
            wait_until_up(base, host)
            # Every phase is far enough ahead that the minute timer, not the API, queues it: the API queues an
            # occurrence before the dispatch horizon (up to two minutes ahead) itself, and creating the jobs
            # takes up to a minute and a half on a busy machine.
            tick = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=4)
            phases.append(
                Phase(
                    "spread",
                    "spread",
                    {f"spread{i}": tick + timedelta(seconds=i % 60) for i in range(args.spread)},
                    herd=False,
                )
            )
            for n, size in enumerate(herds):
                due = tick + timedelta(minutes=2 * (n + 1), seconds=20)
                phases.append(Phase(f"herd {size}", f"herd{n}", {f"herd{n}-{i}": due for i in range(size)}, herd=True))
            plan = {name: due for phase in phases for name, due in phase.plan.items()}
            home = {name: phase.collection for phase in phases for name in phase.plan}
            for phase in phases:
                status, body = request(
                    "PUT",
                    f"{base}{GROUP}/{phase.collection}{VERSION}",
                    {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
                )
                assert status in (200, 201), body

            def create(name: str) -> int:
                job = {
                    "properties": {
                        "startTime": plan[name].isoformat(),
                        "action": {
                            "type": "Http",
                            "request": {"uri": target.url, "method": "POST", "body": "fire"},
                            "retryPolicy": {"retryType": "None"},
                        },
                    }
                }
                return request("PUT", f"{base}{GROUP}/{home[name]}/jobs/{name}{VERSION}", job)[0]

            started = time.perf_counter()
            with ThreadPoolExecutor(8) as pool:
                statuses = list(pool.map(create, plan))
            created = time.perf_counter() - started
            print(
                f"created {statuses.count(201)}/{len(plan)} jobs in {created:.1f} s "
                f"({len(plan) / created:.0f} PUT/s); spread over {tick:%H:%M}Z, herds at "
                + ", ".join(f"{min(p.plan.values()):%H:%M:%S}Z" for p in phases if p.herd),
                flush=True,
            )
            for phase in phases:
                first, last = min(phase.plan.values()), max(phase.plan.values())
                # Storage requests from the start of the minute the dispatcher queues the phase in, to the end.
                pause_until(first.replace(second=0) - timedelta(minutes=1, seconds=1))
                phase.requests_before, invocations_before = meter.requests, count_invocations(log_path)
                deadline = last + timedelta(seconds=60)
                while datetime.now(UTC) < deadline and len(arrived(target, phase)) < len(phase.plan):
                    time.sleep(0.2)
                time.sleep(2)  # let late duplicates show up
                phase.requests_after = meter.requests
                phase.invocations = count_invocations(log_path) - invocations_before
        finally:
            host.terminate()
            host.wait(timeout=15)
            log.close()
            meter.close()

    if args.dump:
        with args.dump.open("w") as out:
            for job, _, at in target.arrivals:
                out.write(json.dumps({"job": job, "due": plan[job].isoformat(), "at": at.isoformat()}) + "\n")
    print(f"storage: {raw:.1f} raw single-entity operations/s (sequential upserts through the same proxy)")
    for phase in phases:
        report(phase, arrived(target, phase), raw)


def pause_until(instant: datetime) -> None:
    delay = (instant - datetime.now(UTC)).total_seconds()
    if delay > 0:
        time.sleep(delay)


def arrived(target: Target, phase: Phase) -> list[tuple[str, str, datetime]]:
    return [a for a in list(target.arrivals) if a[0] in phase.plan]


def report(phase: Phase, arrivals: list[tuple[str, str, datetime]], raw: float) -> None:
    plan, name = phase.plan, phase.name
    jobs = {job for job, _, _ in arrivals}
    lateness = [(at - plan[job]).total_seconds() for job, _, at in arrivals]
    print(
        f"[{name}] fired:      {len(jobs)}/{len(plan)} jobs, {len(arrivals) - len(jobs)} duplicate(s), "
        f"{len(plan) - len(jobs)} lost, {sum(1 for x in lateness if x < 0)} early"
    )
    if not lateness:
        return
    print(
        f"[{name}] lateness:   p50 {statistics.median(lateness):.3f} s, p99 {percentile(lateness, 0.99):.3f} s, "
        f"max {max(lateness):.3f} s, min {min(lateness):.3f} s"
    )
    executions = max(len(arrivals), 1)
    print(
        f"[{name}] cost:       {(phase.requests_after - phase.requests_before) / executions:.1f} storage "
        f"requests and {phase.invocations / executions:.3f} function invocations (executor, dispatch, timer) "
        "per execution"
    )
    if phase.herd:
        span = max(at for _, _, at in arrivals) - min(at for _, _, at in arrivals)
        rate = len(arrivals) / max(span.total_seconds(), 1e-3)
        print(
            f"[{name}] throughput: {rate:.1f} executions/s (first to last arrival, {span.total_seconds():.2f} s); "
            f"ratio to raw storage ops/s = {rate / raw:.3f} (target >= {1 / 3:.3f})"
        )


if __name__ == "__main__":
    main()
