"""Calls into the API in-process (no HTTP), and stand-ins for the queue triggers' delivery loops: `drain`
(the occurrence queue, to the executor), `drain_dispatch` (the dispatch queue, to a dispatcher) and
`settle` (the dispatch queue as its trigger routes it: a collection's cascade too). The benches use them too."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from shared import api
from shared.dispatch_trigger import handle_dispatch_message
from shared.dispatcher import Dispatcher, TickReport
from shared.runtime import Runtime

SUB, RG, JC = "sub-1", "rg-1", "jc1"
VERSION = {"api-version": "2016-03-01"}


def api_call(
    rt: Runtime,
    operation: str,
    method: str,
    *,
    subscription: str,
    group: str | None = None,
    collection: str | None = None,
    job: str | None = None,
    data: bytes = b"",
    query: dict[str, str] | None = None,
    suffix: str = "",
) -> api.ApiResponse:
    """The one in-process client: the request function_app.py would build for this resource, handled by the
    API with `rt` (no HTTP). `query` defaults to the api-version alone."""
    route = {"subscriptionId": subscription}
    path = f"/api/subscriptions/{subscription}"
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
    request = api.ApiRequest(
        method, f"http://127.0.0.1:7071{path}{suffix}", route, VERSION if query is None else query, data
    )
    return api.handle(operation, request, rt)


def encoded(body: Any, raw: bytes | None = None) -> bytes:
    return raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")


def call(
    rt: Runtime,
    operation: str,
    method: str,
    job: str | None = None,
    body: Any = None,
    query: dict[str, str] | None = None,
    raw: bytes | None = None,
    collection: str = JC,
) -> api.ApiResponse:
    return api_call(
        rt,
        operation,
        method,
        subscription=SUB,
        group=RG,
        collection=collection,
        job=job or None,
        data=encoded(body, raw),
        query=query,
    )


def make_collection(rt: Runtime, sku: str = "Standard", collection: str = JC) -> None:
    response = call(
        rt,
        "JobCollections_CreateOrUpdate",
        "PUT",
        collection=collection,
        body={"location": "West US", "properties": {"sku": {"name": sku}}},
    )
    assert response.status == 201, response.body


def drain(rt: Runtime, seconds: float, until: Callable[[], bool] | None = None) -> int:
    """Play the queue trigger on the real queue: hand every message that becomes visible to the executor and
    delete it. Runs for `seconds`, or, with `until`, stops as soon as a pass finds no message and `until()`
    holds."""
    handled = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        messages = list(rt.store.queue.client.receive_messages(visibility_timeout=60))
        for message in messages:
            rt.executor.handle(message.content)
            rt.store.queue.client.delete_message(message)
            handled += 1
        if not messages and until is not None and until():
            return handled
        time.sleep(0.05)
    return handled


def drain_dispatch(dispatcher: Dispatcher) -> TickReport:
    """Play the dispatch queue's trigger after a tick (`dispatcher.fan_out()`): hand every task on the
    dispatcher's store's dispatch queue to `dispatcher` and delete it, until a pass finds the queue empty.
    What the tasks did, added up (`tasks`: how many were handled)."""
    queue = dispatcher.store.dispatch.client
    total = TickReport()
    while messages := list(queue.receive_messages(max_messages=32, visibility_timeout=60)):
        for message in messages:
            report = dispatcher.handle_task(message.content)
            total.add(report)
            total.tasks += report.tasks
            queue.delete_message(message)
    return total


def settle(rt: Runtime) -> int:
    """Play the dispatch queue's trigger until the queue is empty: what an enable, disable or delete of a
    collection queued for its jobs (shared/lifecycle/cascade.py) is done, and any dispatch task too. How many
    messages it handled."""
    queue = rt.store.dispatch.client
    handled = 0
    while messages := list(queue.receive_messages(max_messages=32, visibility_timeout=60)):
        for message in messages:
            handle_dispatch_message(rt, message.content)
            queue.delete_message(message)
            handled += 1
    return handled
