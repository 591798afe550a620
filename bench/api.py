"""API latency beside raw Table Storage latency, measured in one run against a fresh Azurite.

Run from the repo root: `python bench/api.py`. Calls the API in-process (`shared.api.handle`, exactly what
function_app.py calls) and compares each operation with the storage work it cannot avoid, measured on
the same Azurite in the same run: PUT job (create in a collection holding 0-199 jobs and
800-999 jobs, and replace) vs one entity upsert, GET job vs one entity get, listing
1,000 jobs (all pages of 100) vs a raw paged query of the same 1,000 entities. Target: <= 2x.

Each API sample is paired with a sample of its raw operation taken right before it, so both see the same
load on the machine (other processes come and go on a shared host); the ratio is of the two medians. Recorded
(bench/figures.py, when BENCH_FIGURES names a file) as bench "api", one phase per API call.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.figures import record
from devhost.azurite import Azurite
from shared import api
from shared.keys import CollectionKey
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store.clients import table_service
from shared.store.keys import job_partition

SUB, RG, JC = "bench-sub", "bench-rg", "bench"
JOBS = 1000
SAMPLES = 200
LIST_ROUNDS = 10
V = {"api-version": "2016-03-01"}


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


def timed(fn: Callable[[int], object], count: int) -> list[float]:
    samples = []
    for i in range(count):
        started = time.perf_counter()
        fn(i)
        samples.append(time.perf_counter() - started)
    return samples


def paired(
    fn: Callable[[int], object], raw: Callable[[int], object], count: int, first: int = 0
) -> tuple[list[float], list[float]]:
    """(API samples, raw samples), each API call timed right after its raw counterpart."""
    api_samples, raw_samples = [], []
    for i in range(first, first + count):
        raw_samples += timed(lambda _, i=i: raw(i), 1)
        api_samples += timed(lambda _, i=i: fn(i), 1)
    return api_samples, raw_samples


def request(
    method: str, job: str | None = None, body: object = None, query: dict[str, str] | None = None, suffix: str = ""
) -> api.ApiRequest:
    route = {"subscriptionId": SUB, "resourceGroupName": RG, "jobCollectionName": JC}
    path = f"/api/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}"
    if job:
        route["jobName"] = job
        path += f"/jobs/{job}"
    data = json.dumps(body).encode() if body is not None else b""
    return api.ApiRequest(method, f"http://127.0.0.1:7071{path}{suffix}", route, query or V, data)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, Azurite(Path(folder), in_memory=True) as azurite:
        settings = Settings(
            storage=StorageSettings(connection_string=azurite.connection_string),
            table_prefix=f"b{uuid.uuid4().hex[:8]}",
            occurrence_queue=f"bench-{uuid.uuid4().hex[:8]}",
        )
        rt = Runtime.create(settings)
        created = api.handle(
            "JobCollections_CreateOrUpdate",
            request("PUT", body={"location": "westus", "properties": {"sku": {"name": "P20Premium"}}}),
            rt,
        )
        assert created.status == 201, created.body
        start = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()

        def job_body(i: int) -> dict[str, object]:
            return {
                "properties": {
                    "startTime": start,
                    "recurrence": {"frequency": "Hour", "interval": 1},
                    "action": {
                        "type": "Http",
                        "request": {
                            "uri": f"http://127.0.0.1:9/hook/{i}",
                            "method": "POST",
                            "body": "x" * 64,
                            "headers": {"content-type": "text/plain"},
                        },
                        "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S"},
                    },
                }
            }

        def create(i: int) -> None:
            answer = api.handle("Jobs_CreateOrUpdate", request("PUT", f"job{i:04d}", job_body(i)), rt)
            assert answer.status == 201, answer.body

        def put(i: int) -> None:
            answer = api.handle("Jobs_CreateOrUpdate", request("PUT", f"job{i % JOBS:04d}", job_body(i)), rt)
            assert answer.status == 200, answer.body

        def get(i: int) -> None:
            answer = api.handle("Jobs_Get", request("GET", f"job{(i * 7) % JOBS:04d}"), rt)
            assert answer.status == 200, answer.body

        def list_all(_: int) -> None:
            query, total = dict(V), 0
            while True:
                answer = api.handle("Jobs_List", request("GET", query=query, suffix="/jobs"), rt)
                total += len(answer.body["value"])
                if not answer.body["nextLink"]:
                    break
                query = dict(pair.split("=", 1) for pair in answer.body["nextLink"].split("?", 1)[1].split("&"))
                query = {k: v.replace("%20", " ").replace("%27", "'") for k, v in query.items()}
            assert total == JOBS, total

        # Raw storage: the same kind of entity, in a partition of its own of the same table, through an SDK
        # client configured as the store's (shared/store/clients.py).
        raw_jobs = table_service(settings.storage).get_table_client(rt.store.jobs.table.name)
        create(0)
        entity = dict(raw_jobs.get_entity(job_partition(CollectionKey(SUB, RG, JC)), "job0000"))
        partition = f"raw|{uuid.uuid4().hex[:6]}"

        def raw_upsert(i: int) -> None:
            raw_jobs.upsert_entity({**entity, "PartitionKey": partition, "RowKey": f"job{i % JOBS:04d}"})

        # The i-th create finds i jobs in the collection.
        early = paired(create, raw_upsert, SAMPLES - 1, first=1)
        for i in range(SAMPLES, JOBS - SAMPLES):
            create(i)
        late = paired(create, raw_upsert, SAMPLES, first=JOBS - SAMPLES)
        for i in range(JOBS):
            raw_upsert(i)  # the raw partition holds as many entities as the collection

        def raw_get(i: int) -> None:
            raw_jobs.get_entity(partition, f"job{(i * 7) % JOBS:04d}")

        def raw_list(_: int) -> None:
            pages = raw_jobs.query_entities(
                "PartitionKey eq @pk", parameters={"pk": partition}, results_per_page=100
            ).by_page()
            assert sum(len(list(p)) for p in pages) == JOBS

        rows = [  # (its phase in the figures, the API call, its samples, the raw ones, the raw operation)
            ("put-job-create-0-199", "PUT job (create, 0-199 held)", *early, "upsert entity"),
            (
                f"put-job-create-{JOBS - SAMPLES}-{JOBS - 1}",
                f"PUT job (create, {JOBS - SAMPLES}-{JOBS - 1} held)",
                *late,
                "upsert entity",
            ),
            ("put-job-replace", "PUT job (replace)", *paired(put, raw_upsert, SAMPLES), "upsert entity"),
            ("get-job", "GET job", *paired(get, raw_get, SAMPLES), "get entity"),
            (
                f"list-{JOBS}-jobs",
                f"list {JOBS} jobs, all pages",
                *paired(list_all, raw_list, LIST_ROUNDS),
                f"query {JOBS}, pages of 100",
            ),
        ]
        print(
            f"\nAPI vs raw Table Storage (Azurite, in-process API, {JOBS} jobs; each API sample paired with a "
            "raw one taken just before it)"
        )
        print(f"{'API call':<32}{'p50 ms':>9}{'p99 ms':>9}   {'raw storage':<26}{'p50 ms':>9}{'p99 ms':>9}{'x p50':>8}")
        phases: dict[str, dict[str, Any]] = {}
        for key, name, samples, raw_samples, raw_name in rows:
            p50, p99 = percentiles(samples)
            r50, r99 = percentiles(raw_samples)
            print(f"{name:<32}{p50:>9.2f}{p99:>9.2f}   {raw_name:<26}{r50:>9.2f}{r99:>9.2f}{p50 / r50:>8.2f}")
            phases[key] = {
                "samples": len(samples),
                "p50_ms": round(p50, 3),
                "p99_ms": round(p99, 3),
                "raw_operation": raw_name,
                "raw_p50_ms": round(r50, 3),
                "raw_p99_ms": round(r99, 3),
                "ratio_to_raw": round(p50 / r50, 3),
            }
    raw = {  # the raw operations of the same run, as the other benches name them
        "entity_read_p50_ms": phases["get-job"]["raw_p50_ms"],
        "entity_upsert_p50_ms": phases["put-job-replace"]["raw_p50_ms"],
        f"query_{JOBS}_paged_p50_ms": phases[f"list-{JOBS}-jobs"]["raw_p50_ms"],
    }
    record("api", phases, raw)


if __name__ == "__main__":
    main()
