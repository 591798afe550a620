"""Two storage accounts vs one: where the storage transactions of creates, a dispatch tick and executions go.

Run from the repo root: `python bench/accounts.py [--collections 20 --jobs 25]` (under a minute; not part of
`make test`). Two Azurite instances (in memory), a manual clock, and the same work twice: once on one account
(`AzureWebJobsStorage` only), once on two (`SCHEDULER_STORAGE_ACCOUNTS` naming the second Azurite). The work:
create the collections and their one-time jobs through the API, all due in one minute; one dispatcher tick
(fan-out plus every task, in this process); every occurrence executed (an Http action to a local server).
Storage requests are counted at the SDK's HTTP transport, per Azurite and service (table or queue), and
printed per execution. Also: a list-by-subscription page (p50), with one and with two accounts, as a ratio to
one raw partition query measured in the same run. Recorded (bench/figures.py, when BENCH_FIGURES names a file) as
bench "accounts", phases `one-account` and `two-accounts`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from azure.core.pipeline.transport import RequestsTransport

from bench.figures import record
from devhost.azurite import Azurite
from shared import api
from shared.dispatcher import Dispatcher
from shared.private_targets import PrivateTargets
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from tests.support.clock import ManualClock
from tests.support.scheduler_client import drain_dispatch

SUB = "accounts-sub"
V = {"api-version": "2016-03-01"}
LIST_SAMPLES = 40
STAGES = ("create", "tick", "execute")
NAMES = {1: "one-account", 2: "two-accounts"}  # each run's phase in the recorded figures

# Storage requests of this process by port (each Azurite service has its own), counted at the SDK's transport.
_counts: Counter[int] = Counter()
_lock = threading.Lock()
_send = RequestsTransport.send


def _counting_send(self: RequestsTransport, request: object, **kwargs: object) -> object:
    with _lock:
        _counts[urlsplit(request.url).port or 0] += 1  # type: ignore[attr-defined]
    return _send(self, request, **kwargs)  # type: ignore[arg-type]


RequestsTransport.send = _counting_send  # type: ignore[method-assign]


class _Target(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        with _lock:
            _Target.hits += 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def call(
    rt: Runtime,
    operation: str,
    method: str,
    group: str | None = None,
    collection: str | None = None,
    job: str | None = None,
    body: object = None,
) -> api.ApiResponse:
    route = {"subscriptionId": SUB}
    path = f"/api/subscriptions/{SUB}"
    if group is not None:
        route |= {"resourceGroupName": group}
        path += f"/resourceGroups/{group}"
    path += "/providers/Microsoft.Scheduler/jobCollections"
    if collection is not None:
        route |= {"jobCollectionName": collection}
        path += f"/{collection}"
    if job is not None:
        route |= {"jobName": job}
        path += f"/jobs/{job}"
    data = json.dumps(body).encode() if body is not None else b""
    return api.handle(operation, api.ApiRequest(method, f"http://127.0.0.1{path}", route, V, data), rt)


def _phase(azurites: list[Azurite], fn: object) -> dict[str, int]:
    """Requests per (account, service) while `fn` runs."""
    _counts.clear()
    fn()  # type: ignore[operator]
    found = {}
    for i, azurite in enumerate(azurites):
        found[f"account {i} tables"] = _counts[azurite.ports.table]
        found[f"account {i} queues"] = _counts[azurite.ports.queue]
    return found


def run(azurites: list[Azurite], accounts: int, collections: int, jobs: int, target: str) -> dict[str, object]:
    suffix = uuid.uuid4().hex[:8]
    settings = Settings(
        storage=StorageSettings(connection_string=azurites[0].connection_string),
        private_targets=PrivateTargets.parse("loopback"),
        table_prefix=f"a{suffix}",
        occurrence_queue=f"occ-{suffix}",
        dispatch_queue=f"dsp-{suffix}",
        data_accounts=tuple(StorageSettings(connection_string=a.connection_string) for a in azurites[1:accounts]),
    )
    clock = ManualClock(datetime.now(UTC).replace(second=30, microsecond=0))
    rt = Runtime.create(settings, clock)
    due = clock.now().replace(second=0) + timedelta(minutes=3)

    def create() -> None:
        for c in range(collections):
            answer = call(
                rt,
                "JobCollections_CreateOrUpdate",
                "PUT",
                f"rg-{c % 3}",
                f"jc{c:03d}",
                body={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
            )
            assert answer.status == 201, answer.body
            for j in range(jobs):
                answer = call(
                    rt,
                    "Jobs_CreateOrUpdate",
                    "PUT",
                    f"rg-{c % 3}",
                    f"jc{c:03d}",
                    f"job{j:03d}",
                    {
                        "properties": {
                            "startTime": (due + timedelta(seconds=j % 60)).isoformat(),
                            "action": {"type": "Http", "request": {"uri": f"{target}/{c}/{j}", "method": "GET"}},
                        }
                    },
                )
                assert answer.status == 201, answer.body

    def tick() -> None:
        clock.current = due + timedelta(seconds=59)
        dispatcher = Dispatcher(rt.store, clock)
        dispatcher.fan_out()
        drain_dispatch(dispatcher)

    def execute() -> None:
        # A message may carry several occurrences (the herd pipeline): the target counts the executions.
        while messages := list(rt.store.queue.client.receive_messages(max_messages=32, visibility_timeout=60)):
            for message in messages:
                rt.executor.handle(message.content)
                rt.store.queue.client.delete_message(message)

    before = _Target.hits
    figures: dict[str, object] = {
        "create": _phase(azurites, create),
        "tick": _phase(azurites, tick),
        "execute": _phase(azurites, execute),
    }
    figures["executed"] = _Target.hits - before
    samples, raw = [], []
    for _ in range(LIST_SAMPLES):
        started = time.perf_counter()
        listed = call(rt, "JobCollections_ListBySubscription", "GET")
        samples.append(time.perf_counter() - started)
        assert len(listed.body["value"]) == collections
        table = rt.store.tables[0]  # the primary's first table: any one raw partition query
        started = time.perf_counter()
        list(table.query("PartitionKey eq @pk", {"pk": "none"}))
        raw.append(time.perf_counter() - started)
    figures["list_ms"] = statistics.median(samples) * 1000
    figures["raw_ms"] = statistics.median(raw) * 1000
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=25, help="jobs per collection")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Target)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    target = f"http://127.0.0.1:{server.server_address[1]}"
    with (
        tempfile.TemporaryDirectory() as folder,
        Azurite(Path(folder) / "one", in_memory=True) as first,
        Azurite(Path(folder) / "two", in_memory=True) as second,
    ):
        azurites = [first, second]
        total = args.collections * args.jobs
        print(
            f"\nAccounts: {args.collections} collections x {args.jobs} jobs = {total} executions, due in one minute "
            "(two Azurite instances in memory on this machine; other work may share its cores)",
            flush=True,
        )
        results = {accounts: run(azurites, accounts, args.collections, args.jobs, target) for accounts in (1, 2)}
        server.shutdown()
    phases: dict[str, dict[str, Any]] = {}
    for accounts, figures in results.items():
        assert figures["executed"] == total, figures["executed"]
        phases[NAMES[accounts]] = recorded(figures, args.collections, args.jobs)
        print(f"\n{accounts} account(s): storage requests, total (per execution)")
        print(f"  {'phase':<10}" + "".join(f"{name:>22}" for name in figures["create"]))  # type: ignore[union-attr]
        for phase in STAGES:
            counts = figures[phase].values()  # type: ignore[union-attr]
            print(f"  {phase:<10}" + "".join(f"{f'{n} ({n / total:.2f})':>22}" for n in counts))
        print(
            f"  list by subscription ({args.collections} collections) p50 {figures['list_ms']:.2f} ms = "
            f"{figures['list_ms'] / figures['raw_ms']:.2f}x a raw partition query ({figures['raw_ms']:.2f} ms)"
        )
    raw = {f"partition_query_p50_ms_{name.replace('-', '_')}": phase["raw_p50_ms"] for name, phase in phases.items()}
    record("accounts", phases, raw)


def recorded(figures: dict[str, Any], collections: int, jobs: int) -> dict[str, Any]:
    """One run's figures as bench/figures.py records them (the printed ones: requests by stage, account and
    service, in total and per execution; the list page beside the raw query)."""
    total = collections * jobs
    stages = {stage: {cell.replace(" ", "_"): n for cell, n in figures[stage].items()} for stage in STAGES}
    return {
        "collections": collections,
        "jobs_per_collection": jobs,
        "executions": figures["executed"],
        "storage_requests_by_stage": stages,
        "storage_requests_per_execution_by_stage": {
            stage: {cell: round(n / total, 3) for cell, n in cells.items()} for stage, cells in stages.items()
        },
        "list_by_subscription_p50_ms": round(figures["list_ms"], 3),
        "raw_p50_ms": round(figures["raw_ms"], 3),
        "ratio_to_raw": round(figures["list_ms"] / figures["raw_ms"], 3),
    }


if __name__ == "__main__":
    main()
