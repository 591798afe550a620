"""In-process API calls with any resource group and collection, for the tests of several storage accounts."""

from __future__ import annotations

import json
from typing import Any

from shared import api
from shared.runtime import Runtime

SUB = "sub-accounts"
V = {"api-version": "2016-03-01"}


def call(rt: Runtime, operation: str, method: str, group: str | None = None, collection: str | None = None,
         job: str | None = None, body: Any = None, query: dict[str, str] | None = None) -> api.ApiResponse:
    route = {"subscriptionId": SUB}
    path = f"/api/subscriptions/{SUB}"
    if group is not None:
        route["resourceGroupName"] = group
        path += f"/resourceGroups/{group}"
    path += "/providers/Microsoft.Scheduler/jobCollections"
    if collection is not None:
        route["jobCollectionName"] = collection
        path += f"/{collection}"
    if job is not None:
        route["jobName"] = job
        path += f"/jobs/{job}"
    data = json.dumps(body).encode() if body is not None else b""
    request = api.ApiRequest(method, f"http://127.0.0.1:7071{path}", route, {**V, **(query or {})}, data)
    return api.handle(operation, request, rt)


def make_collections(rt: Runtime, count: int) -> list[tuple[str, str]]:
    """(group, name) of `count` new Premium collections over two resource groups."""
    made = []
    for i in range(count):
        group, name = f"rg-{i % 2}", f"jc{i:02d}"
        answer = call(rt, "JobCollections_CreateOrUpdate", "PUT", group, name,
                      body={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}})
        assert answer.status == 201, answer.body
        made.append((group, name))
    return made
