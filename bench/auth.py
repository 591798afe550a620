"""What `entra` mode adds to an API call, beside raw Table Storage, measured in one run against a fresh Azurite.

Run from the repo root: `python bench/auth.py`. Calls the API in-process (`shared.api.handle`) for GET job as
the same caller three ways: `none` mode (no check), `entra` mode with a real RS256 token (validated with PyJWT
against a local issuer's keys, fetched once over loopback) and a role assignment at the resource group among
`ASSIGNMENTS` in the subscription's partition (found with one filtered query), and raw storage (one entity
get, and the whole partition's query that a caller in more than 14 groups costs instead). Recorded (bench/figures.py,
when BENCH_FIGURES names a file) as bench "auth", phases `get-job-auth-none` and `get-job-auth-entra` (their ratio
to the raw entity get), the raw rows in `raw`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api import percentiles, request, timed

from bench.figures import record
from devhost.azurite import Azurite
from shared import api
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store.clients import table_service
from tests.support.identity import local_issuer

SUB, RG = "bench-sub", "bench-rg"
SAMPLES = 300
ASSIGNMENTS = 50
READER = "acdd72a7-3385-48ef-bd42-f606fba81ae7"


def _assign(rt: Runtime, principal: str, scope_route: dict[str, str]) -> None:
    name = str(uuid.uuid4())
    body = {"properties": {"roleDefinitionId": READER, "principalId": principal}}
    answer = api.handle(
        "RoleAssignments_Create",
        api.ApiRequest(
            "PUT",
            "http://127.0.0.1/x",
            {**scope_route, "roleAssignmentName": name},
            {"api-version": "2022-04-01"},
            json.dumps(body).encode(),
        ),
        rt,
    )
    assert answer.status == 201, answer.body


def main() -> None:
    with (
        tempfile.TemporaryDirectory() as folder,
        Azurite(Path(folder), in_memory=True) as azurite,
        local_issuer() as issuer,
    ):
        settings = Settings(
            storage=StorageSettings(connection_string=azurite.connection_string),
            table_prefix=f"b{uuid.uuid4().hex[:8]}",
            occurrence_queue=f"bench-{uuid.uuid4().hex[:8]}",
        )
        open_rt = Runtime.create(settings)
        created = api.handle(
            "JobCollections_CreateOrUpdate",
            request("PUT", body={"location": "westus", "properties": {"sku": {"name": "Standard"}}}),
            open_rt,
        )
        assert created.status == 201, created.body
        put = api.handle(
            "Jobs_CreateOrUpdate",
            request(
                "PUT",
                "job",
                {
                    "properties": {
                        "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}
                    }
                },
            ),
            open_rt,
        )
        assert put.status == 201, put.body
        caller = str(uuid.uuid4())
        for _ in range(ASSIGNMENTS - 1):
            _assign(open_rt, str(uuid.uuid4()), {"subscriptionId": SUB, "resourceGroupName": RG})
        _assign(open_rt, caller, {"subscriptionId": SUB, "resourceGroupName": RG})
        entra_rt = Runtime.create(dataclasses.replace(settings, auth=issuer.settings()))
        token = issuer.token(caller, lifetime=7200)
        bench_request = dataclasses.replace(request("GET", "job"), headers={"Authorization": f"Bearer {token}"})

        def get_open(_: int) -> None:
            assert api.handle("Jobs_Get", bench_request, open_rt).status == 200

        def get_entra(_: int) -> None:
            answer = api.handle("Jobs_Get", bench_request, entra_rt)
            assert answer.status == 200, answer.body

        tables = table_service(open_rt.settings.storage)  # raw SDK clients, configured as the store's
        table = tables.get_table_client(open_rt.store.jobs.table.name)
        sample = next(iter(table.list_entities(results_per_page=1)))
        grants = tables.get_table_client(open_rt.store.role_assignments.table.name)

        def raw_get(_: int) -> None:
            table.get_entity(sample["PartitionKey"], sample["RowKey"])

        def raw_partition(_: int) -> None:
            assert len(list(grants.query_entities("PartitionKey eq @pk", parameters={"pk": SUB}))) == ASSIGNMENTS

        get_entra(0)  # the first call fetches the issuer's metadata and keys
        rows = [  # (its name in the figures, the operation, its samples)
            ("get-job-auth-none", "GET job, SCHEDULER_AUTH=none", timed(get_open, SAMPLES)),
            ("get-job-auth-entra", "GET job, SCHEDULER_AUTH=entra", timed(get_entra, SAMPLES)),
            ("entity_read", "raw: get entity", timed(raw_get, SAMPLES)),
            ("assignments_query", f"raw: query {ASSIGNMENTS} assignments", timed(raw_partition, SAMPLES)),
        ]
        base = percentiles(rows[2][2])[0]
        print(
            f"\nAuthentication + authorization cost (Azurite, in-process API, {ASSIGNMENTS} role assignments in "
            "the subscription; ratios to one raw entity get)"
        )
        print(f"{'operation':<40}{'p50 ms':>9}{'p99 ms':>9}{'x get':>8}")
        phases: dict[str, dict[str, Any]] = {}
        raw: dict[str, float] = {}
        for key, name, samples in rows:
            p50, p99 = percentiles(samples)
            print(f"{name:<40}{p50:>9.2f}{p99:>9.2f}{p50 / base:>8.2f}")
            if name.startswith("raw: "):  # raw storage in the same run
                raw |= {f"{key}_p50_ms": round(p50, 3), f"{key}_p99_ms": round(p99, 3)}
                if key != "entity_read":
                    raw[f"{key}_ratio_to_entity_read"] = round(p50 / base, 3)
            else:
                phases[key] = {
                    "samples": len(samples),
                    "assignments": ASSIGNMENTS,
                    "p50_ms": round(p50, 3),
                    "p99_ms": round(p99, 3),
                    "ratio_to_raw": round(p50 / base, 3),
                }
    record("auth", phases, raw)


if __name__ == "__main__":
    main()
