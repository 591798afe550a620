"""A million stored jobs: does anything the scheduler does per minute or per request grow with them?

Run from the repo root: `python bench/scale.py [--jobs 1000000]` or `make bench-scale` (about 15 minutes;
not part of `make test` or `make bench`). One Azurite (in memory), one deployment, a manual clock, in two stages:

1. 1,000 jobs: one P20Premium collection of 1,000 minutely jobs, created through the API, due across the
   seconds of each minute, plus 300 history entries of one job. Measured: three dispatcher ticks (each
   dispatches the minute's 1,000 occurrences: wall time and storage operations), GET job, the first page of
   the jobs list, the first page of history, and this process's memory.
2. The rest up to `--jobs`, bulk-loaded: the entities the store writes (its own entity builders) for records
   cloned from jobs the API created, in entity-group transactions of 100 (bench/bulk.py), in
   collections of 1,000 daily jobs due from tomorrow on, each with its due entry. Then the same measurements,
   on the same 1,000 due jobs.

The load runs in this process too, so its RSS includes the loader's leftovers.
Prints stage 2 / stage 1 ratios (targets: tick <= 1.1x; GET job, jobs page and history page <= 1.2x; memory
flat) and how fast Azurite took the load. If Azurite gives up part-way, the figures are printed for the size it reached.
Printed side by side and recorded (bench/figures.py, when BENCH_FIGURES names a file) by bench/scale_report.py.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from azure.core.pipeline.transport import RequestsTransport
from azure.data.tables import TableClient

from bench import scale_report
from bench.bulk import insert_batch
from devhost.azurite import Azurite
from shared import api
from shared.dispatcher import Dispatcher
from shared.keys import CollectionKey, JobKey
from shared.model import JobExecutionStatus, JobHistoryActionName
from shared.records import HistoryRecord, JobRecord
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store.clients import table_service
from tests.support.clock import ManualClock

SUB, RG = "scale-sub", "scale-rg"
HOT = "hot"
PER_COLLECTION = 1000
V = {"api-version": "2016-03-01"}
GET_SAMPLES = 300
TICKS = 5
CHECKPOINTS = [100_000, 250_000, 500_000]
PAGE_SAMPLES = 60

# Storage requests of this process, counted at the SDK's HTTP transport (every table and queue call).
_requests = 0
_count_lock = threading.Lock()
_send = RequestsTransport.send


def _counting_send(self: RequestsTransport, request: object, **kwargs: object) -> object:
    global _requests
    with _count_lock:
        _requests += 1
    return _send(self, request, **kwargs)


RequestsTransport.send = _counting_send  # type: ignore[method-assign]


def rss_mb(pid: int | str = "self") -> tuple[float, float]:
    """(current, peak) resident memory of a process in MB, from /proc."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields.get("VmHWM", fields["VmRSS"]).split()[0]) / 1024


def call(
    rt: Runtime,
    operation: str,
    method: str,
    collection: str,
    job: str | None = None,
    body: object = None,
    query: dict[str, str] | None = None,
    suffix: str = "",
) -> api.ApiResponse:
    route = {"subscriptionId": SUB, "resourceGroupName": RG, "jobCollectionName": collection}
    path = f"/api/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{collection}"
    if job:
        route["jobName"] = job
        path += f"/jobs/{job}"
    data = json.dumps(body).encode() if body is not None else b""
    return api.handle(
        operation,
        api.ApiRequest(
            method,
            f"http://127.0.0.1:7071{path}{suffix}",
            route,
            query or V,
            data,
            {"Content-Type": "application/json"},
        ),
        rt,
    )


def job_body(start: datetime, frequency: str) -> dict[str, object]:
    return {
        "properties": {
            "startTime": start.isoformat(),
            "recurrence": {"frequency": frequency},
            "action": {
                "type": "Http",
                "request": {"uri": "https://example.com/hook", "method": "POST", "body": "x" * 64},
            },
        }
    }


def timed(fn: Callable[[int], object], count: int) -> list[float]:
    samples = []
    for i in range(count):
        started = time.perf_counter()
        fn(i)
        samples.append(time.perf_counter() - started)
    return samples


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


class Bench:
    def __init__(self, rt: Runtime, clock: ManualClock, azurite_pid: int) -> None:
        self.rt = rt
        self.clock = clock
        self.azurite_pid = azurite_pid
        self.first_due = clock.now().replace(second=0, microsecond=0) + timedelta(minutes=3)
        self.next_minute = self.first_due
        self.stored = 0
        self._last_stored, self._last_time = 0, time.perf_counter()

    def _raw(self, table: str) -> TableClient:
        """A raw SDK client of one of the store's tables ("Jobs", "Due"), configured as the store's."""
        return table_service(self.rt.settings.storage).get_table_client(f"{self.rt.settings.table_prefix}{table}")

    def create_hot(self) -> None:
        answer = call(
            self.rt,
            "JobCollections_CreateOrUpdate",
            "PUT",
            HOT,
            body={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
        )
        assert answer.status == 201, answer.body
        for i in range(PER_COLLECTION):
            start = self.first_due + timedelta(seconds=i % 60)
            answer = call(self.rt, "Jobs_CreateOrUpdate", "PUT", HOT, f"job{i:04d}", job_body(start, "Minute"))
            assert answer.status == 201, answer.body
        self.stored = PER_COLLECTION
        key = JobKey(SUB, RG, HOT, "job0000")
        for n in range(300):
            at = self.first_due - timedelta(days=1) + timedelta(minutes=n)
            self.rt.store.history.add(
                HistoryRecord(
                    key=key,
                    execution_id=f"bench-{n}",
                    expected_execution_time=at,
                    start_time=at,
                    end_time=at,
                    action_name=JobHistoryActionName.MAIN_ACTION,
                    status=JobExecutionStatus.COMPLETED,
                    message="Http Action - Response from host 'example.com': 'OK' Response Headers: Date: today",
                    repeat_count=n,
                ),
                at,
            )

    def measure(self, label: str) -> dict[str, float]:
        gc.collect()
        time.sleep(5)  # let Azurite settle after a load (its garbage collector)
        ticks, operations = [], []
        for _ in range(TICKS):
            self.clock.current = self.next_minute - timedelta(minutes=1)  # the tick a minute ahead of the bucket
            before = _requests
            started = time.perf_counter()
            report = Dispatcher(self.rt.store, self.clock).tick()
            ticks.append(time.perf_counter() - started)
            operations.append(_requests - before)
            assert report.enqueued == PER_COLLECTION and report.failed == 0, report
            self.next_minute += timedelta(minutes=1)
        self.rt.store.queue.client.clear_messages()
        cold = [f"cold{n:04d}" for n in range(max(self.stored // PER_COLLECTION - 1, 0))] or [HOT]

        def get_job(i: int) -> None:
            collection = HOT if i % 2 else cold[(i * 7919) % len(cold)]
            answer = call(self.rt, "Jobs_Get", "GET", collection, f"job{(i * 31) % PER_COLLECTION:04d}")
            assert answer.status == 200, answer.body

        def list_page(i: int) -> None:
            collection = HOT if i % 2 else cold[(i * 7919) % len(cold)]
            answer = call(self.rt, "Jobs_List", "GET", collection, query={**V, "$top": "100"}, suffix="/jobs")
            assert answer.status == 200 and len(answer.body["value"]) == 100, answer.body

        def history_page(_: int) -> None:
            answer = call(
                self.rt, "Jobs_ListJobHistory", "GET", HOT, "job0000", query={**V, "$top": "100"}, suffix="/history"
            )
            assert answer.status == 200 and len(answer.body["value"]) == 100, answer.body

        # Raw storage on the same tables in the same run: Azurite evaluates a partition query against every
        # entity of the table (Azure reads the partition only), so these show what is Azurite's and not ours.
        due_partition = self.rt.store.due.partition(JobKey(SUB, RG, HOT, "job0000"), self.next_minute)
        hot_pk = f"{SUB}|{RG}|{HOT}"

        def raw_due(_: int) -> None:
            assert list(self._raw("Due").query_entities("PartitionKey eq @pk", parameters={"pk": due_partition}))

        def raw_page(_: int) -> None:
            pages = (
                self._raw("Jobs")
                .query_entities("PartitionKey eq @pk", parameters={"pk": hot_pk}, results_per_page=100)
                .by_page()
            )
            assert len(list(next(pages))) == 100

        def raw_get(i: int) -> None:
            self._raw("Jobs").get_entity(hot_pk, f"job{(i * 31) % PER_COLLECTION:04d}")

        figures = {
            "raw_due_ms": ms(timed(raw_due, 20)),
            "raw_page_ms": ms(timed(raw_page, 20)),
            "raw_get_ms": ms(timed(raw_get, GET_SAMPLES)),
            "tick_s": statistics.median(ticks),
            "tick_requests": statistics.median(operations),
            "get_ms": ms(timed(get_job, GET_SAMPLES)),
            "list_ms": ms(timed(list_page, PAGE_SAMPLES)),
            "history_ms": ms(timed(history_page, PAGE_SAMPLES)),
            "rss_mb": rss_mb()[0],
            "azurite_rss_mb": rss_mb(self.azurite_pid)[0],
        }
        each = ", ".join(f"{t:.2f}" for t in ticks)
        print(
            f"  [{label}] {self.stored:,} jobs stored: tick {figures['tick_s']:.2f} s ({each}),"
            f" {figures['tick_requests']:.0f} storage requests; GET job {figures['get_ms']:.2f} ms, list page "
            f"{figures['list_ms']:.2f} ms, history page {figures['history_ms']:.2f} ms; bench RSS "
            f"{figures['rss_mb']:.0f} MB, Azurite RSS {figures['azurite_rss_mb']:.0f} MB; raw: due partition query "
            f"{figures['raw_due_ms']:.2f} ms, jobs page query {figures['raw_page_ms']:.2f} ms, get entity "
            f"{figures['raw_get_ms']:.2f} ms",
            flush=True,
        )
        return figures

    def templates(self) -> list[JobRecord]:
        """60 daily jobs created through the API, first due tomorrow at 60 different minutes."""
        answer = call(
            self.rt,
            "JobCollections_CreateOrUpdate",
            "PUT",
            "templates",
            body={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
        )
        assert answer.status == 201, answer.body
        records = []
        for minute in range(60):
            start = self.first_due + timedelta(days=1, minutes=minute)
            answer = call(self.rt, "Jobs_CreateOrUpdate", "PUT", "templates", f"t{minute}", job_body(start, "Day"))
            assert answer.status == 201, answer.body
            record = self.rt.store.jobs.get(JobKey(SUB, RG, "templates", f"t{minute}"))
            assert record is not None and record.next_execution_time is not None
            records.append(record)
        return records

    def load(self, total: int, deadline: float) -> float:
        """Bulk-load cold collections until `total` jobs are stored or the deadline (perf_counter) passed;
        returns the seconds it took."""
        templates = self._templates = getattr(self, "_templates", None) or self.templates()
        started = time.perf_counter()
        first_cold = self.stored // PER_COLLECTION - 1
        collections = total // PER_COLLECTION - 1
        group = 25  # collections per round: enough due entries per partition to fill batches of 100
        clients = {"jobs": self._raw("Jobs"), "due": self._raw("Due")}
        with ThreadPoolExecutor(max_workers=2) as pool:
            for first in range(first_cold, collections, group):
                if time.perf_counter() > deadline:
                    break
                names = [f"cold{n:04d}" for n in range(first, min(first + group, collections))]
                for name in names:
                    answer = call(
                        self.rt,
                        "JobCollections_CreateOrUpdate",
                        "PUT",
                        name,
                        body={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
                    )
                    assert answer.status == 201, answer.body
                records = [
                    replace(templates[i % 60], key=JobKey(SUB, RG, name, f"job{i:04d}"), etag=None)
                    for name in names
                    for i in range(PER_COLLECTION)
                ]
                # The entities the store writes for these records (jobs, then their due entries), in
                # transactions of 100 per partition, two at a time (Azurite works while Python serializes).
                groups: dict[tuple[str, str], list[dict[str, object]]] = {}
                for record in records:
                    job = self.rt.store.jobs._entity(record)
                    groups.setdefault(("jobs", job["PartitionKey"]), []).append(job)
                    assert record.next_execution_time is not None
                    due = self.rt.store.due._entity(record.key, record.next_execution_time, record.generation)
                    groups.setdefault(("due", due["PartitionKey"]), []).append(due)
                batches = [
                    (kind, entities[k : k + 100])
                    for (kind, _), entities in groups.items()
                    for k in range(0, len(entities), 100)
                ]
                list(pool.map(lambda b: insert_batch(clients[b[0]], b[1]), batches))
                for name in names:  # the job counter, as the API's creates would have left it
                    collection = self.rt.store.collections.get(CollectionKey(SUB, RG, name))
                    assert collection is not None
                    self.rt.store.collections.replace(replace(collection, job_count=PER_COLLECTION))
                self.stored += len(records)
                if ((first - first_cold) // group) % 4 == 3 or first + group >= collections:
                    now = time.perf_counter()
                    rate = (self.stored - self._last_stored) / (now - self._last_time)
                    self._last_stored, self._last_time = self.stored, now
                    print(
                        f"  {self.stored:,} jobs stored ({rate:,.0f} jobs/s lately); Azurite"
                        f" RSS {rss_mb(self.azurite_pid)[0]:,.0f} MB",
                        flush=True,
                    )
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--budget", type=int, default=480, help="seconds of bulk loading at most")
    parser.add_argument("--azurite-heap-mb", type=int, default=12000, help="Node heap limit for Azurite")
    args = parser.parse_args()
    os.environ["NODE_OPTIONS"] = f"--max-old-space-size={args.azurite_heap_mb}"  # Azurite keeps everything in memory
    with tempfile.TemporaryDirectory() as folder, Azurite(Path(folder), in_memory=True) as azurite:
        settings = Settings(
            storage=StorageSettings(connection_string=azurite.connection_string),
            table_prefix=f"s{uuid.uuid4().hex[:8]}",
            occurrence_queue=f"scale-{uuid.uuid4().hex[:8]}",
            dispatch_queue=f"scaled-{uuid.uuid4().hex[:8]}",
        )
        clock = ManualClock(datetime.now(UTC).replace(microsecond=0))
        rt = Runtime.create(settings, clock)
        assert azurite._process is not None
        bench = Bench(rt, clock, azurite._process.pid)
        print(
            f"\nScale: {args.jobs:,} stored jobs vs {PER_COLLECTION:,} (Azurite in memory, {settings.due_shards} due "
            f"shards, in-process dispatcher tick of {PER_COLLECTION:,} due occurrences)",
            flush=True,
        )
        bench.create_hot()
        measured = [(bench.stored, bench.measure("1k"))]
        started = time.perf_counter()
        bench._last_stored, bench._last_time = bench.stored, started
        deadline = started + args.budget
        stopped = None
        for checkpoint in [c for c in CHECKPOINTS if c < args.jobs] + [args.jobs]:
            try:
                bench.load(checkpoint, deadline)
            except Exception as exc:  # Azurite ran out of memory or stopped answering: report where
                stopped = f"Azurite failed at {bench.stored:,} jobs: {type(exc).__name__}: {str(exc)[:200]}"
            if bench.stored < checkpoint and stopped is None:
                stopped = f"the load budget ({args.budget} s) ran out at {bench.stored:,} jobs"
            loaded = time.perf_counter() - started
            print(f"  bulk load: {bench.stored:,} jobs stored after {loaded:.0f} s", flush=True)
            if bench.stored > measured[-1][0]:
                measured.append((bench.stored, {**bench.measure(f"{bench.stored:,}"), "loaded_after_s": loaded}))
            if stopped:
                print(f"  stopped: {stopped}", flush=True)
                break
        scale_report.report(measured, args.jobs, stopped)


if __name__ == "__main__":
    main()
