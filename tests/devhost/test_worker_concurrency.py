"""The local host runs functions with the Python worker's concurrency: `def` functions on a pool of
PYTHON_THREADPOOL_THREAD_COUNT threads shared by every trigger, `async def` functions on one event loop,
while the queue trigger still hands over batchSize + newBatchThreshold messages at once."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devhost.host import LocalHost
from devhost.invoker import worker_thread_count

HOST_JSON = {
    "version": "2.0",
    "extensions": {"queues": {"batchSize": 8, "newBatchThreshold": 4, "maxPollingInterval": "00:00:00.2"}},
}

APP = """
    import asyncio, threading, time
    import azure.functions as func
    app = func.FunctionApp()
    LOCK = threading.Lock()
    STATE = {"active": 0, "peak": 0, "done": 0, "threads": set()}

    def enter():
        with LOCK:
            STATE["active"] += 1
            STATE["peak"] = max(STATE["peak"], STATE["active"])
            STATE["threads"].add(threading.get_ident())

    def leave():
        with LOCK:
            STATE["active"] -= 1
            STATE["done"] += 1

    @app.queue_trigger(arg_name="msg", queue_name="%SYNC_QUEUE%", connection="AzureWebJobsStorage")
    def blocking(msg: func.QueueMessage) -> None:
        enter()
        time.sleep(0.4)
        leave()

    @app.queue_trigger(arg_name="msg", queue_name="%ASYNC_QUEUE%", connection="AzureWebJobsStorage")
    async def cooperative(msg: func.QueueMessage) -> None:
        enter()
        await asyncio.sleep(0.6)
        leave()
    """


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def run_app(
    make_app: Callable[..., Path],
    queue_factory: Callable[..., Any],
    wait_until: Callable[..., Any],
    threads: str,
    which: str,
    count: int,
) -> dict[str, Any]:
    suffix = uuid.uuid4().hex[:8]
    names = {"SYNC_QUEUE": f"devhost-sync-{suffix}", "ASYNC_QUEUE": f"devhost-async-{suffix}"}
    app_dir = make_app(APP, host_json=HOST_JSON, name=f"app-{suffix}")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in names.items():
            patch.setenv(key, value)
        patch.setenv("PYTHON_THREADPOOL_THREAD_COUNT", threads)
        with LocalHost(app_dir) as host:
            client = queue_factory(names[which])
            for i in range(count):
                client.send_message(b64(f"m{i}".encode()))
            state = host.app_module.STATE
            wait_until(lambda: state["done"] == count, timeout=30)
            return dict(state)


def test_sync_functions_never_exceed_the_worker_thread_pool(
    make_app: Callable[..., Path], storage_env: str, queue_factory: Callable[..., Any], wait_until: Callable[..., Any]
) -> None:
    # The trigger hands over up to 8 + 4 messages at once; only 2 worker threads run them.
    state = run_app(make_app, queue_factory, wait_until, "2", "SYNC_QUEUE", 10)
    assert state["peak"] == 2
    assert len(state["threads"]) == 2


def test_async_functions_run_together_on_one_event_loop(
    make_app: Callable[..., Path], storage_env: str, queue_factory: Callable[..., Any], wait_until: Callable[..., Any]
) -> None:
    # A thread count of 1 does not limit coroutines: they overlap up to what the trigger hands over.
    state = run_app(make_app, queue_factory, wait_until, "1", "ASYNC_QUEUE", 10)
    assert state["peak"] > 2
    assert state["peak"] <= 8 + 4
    assert len(state["threads"]) == 1


def test_the_pool_size_follows_the_worker_setting_or_its_default() -> None:
    import os

    default = min(32, (os.cpu_count() or 1) + 4)
    assert worker_thread_count({"PYTHON_THREADPOOL_THREAD_COUNT": "3"}) == 3
    assert worker_thread_count({}) == default
    assert worker_thread_count({"PYTHON_THREADPOOL_THREAD_COUNT": "0"}) == default
    assert worker_thread_count({"PYTHON_THREADPOOL_THREAD_COUNT": "many"}) == default
