"""Calls into the API in-process (no HTTP), and a stand-in for the queue trigger's delivery loop."""

from __future__ import annotations

import json
import time
from typing import Any

from shared import api
from shared.runtime import Runtime

SUB, RG, JC = "sub-1", "rg-1", "jc1"
VERSION = {"api-version": "2016-03-01"}


def call(rt: Runtime, operation: str, method: str, job: str | None = None, body: Any = None,
         query: dict[str, str] | None = None, raw: bytes | None = None, collection: str = JC) -> api.ApiResponse:
    route = {"subscriptionId": SUB, "resourceGroupName": RG, "jobCollectionName": collection}
    path = f"/api/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{collection}"
    if job:
        route["jobName"] = job
        path += f"/jobs/{job}"
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
    request = api.ApiRequest(method, f"http://127.0.0.1:7071{path}", route, VERSION if query is None else query, data)
    return api.handle(operation, request, rt)


def make_collection(rt: Runtime, sku: str = "Standard", collection: str = JC) -> None:
    response = call(rt, "JobCollections_CreateOrUpdate", "PUT", collection=collection,
                    body={"location": "West US", "properties": {"sku": {"name": sku}}})
    assert response.status == 201, response.body


def drain(rt: Runtime, seconds: float) -> int:
    """Hand every message that becomes visible within `seconds` to the executor, as the queue trigger does."""
    handled = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for message in rt.store.queue.client.receive_messages(visibility_timeout=60):
            rt.executor.handle(message.content)
            rt.store.queue.client.delete_message(message)
            handled += 1
        time.sleep(0.1)
    return handled
