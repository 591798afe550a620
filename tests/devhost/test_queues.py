"""Queue triggers against the real Azurite, with the sample app's host.json (maxPollingInterval 1 s,
maxDequeueCount 2, base64 encoding)."""

from __future__ import annotations

import base64
import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from azure.storage.queue import QueueClient

from devhost.host import LocalHost


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def recorded(host: LocalHost, function: str, body: bytes, wait_until: Callable[..., Any]) -> dict[str, Any]:
    """What the sample app's queue function recorded for this message body."""

    def find() -> list[dict[str, Any]]:
        return [r for r in host.app_module.RECORDS if r["body_hex"] == body.hex() and r["function"] == function]

    return wait_until(find, timeout=30)[0]


def test_base64_message_reaches_the_function_as_bytes(
    sample_host: LocalHost, queue_factory: Callable[..., Any], wait_until: Callable[..., Any]
) -> None:
    body = b"\x00\xffbinary-" + uuid.uuid4().hex.encode()
    sent = queue_factory("devhost-sample-in").send_message(b64(body))
    seen = recorded(sample_host, "record_message", body, wait_until)
    assert seen["id"] == sent.id
    assert seen["dequeue_count"] == 1
    assert seen["has_pop_receipt"] and seen["insertion_time"]


def test_message_is_deleted_after_success(
    sample_host: LocalHost, queue_factory: Callable[..., Any], wait_until: Callable[..., Any]
) -> None:
    body = uuid.uuid4().hex.encode()
    client: QueueClient = queue_factory("devhost-sample-in")
    client.send_message(b64(body))
    recorded(sample_host, "record_message", body, wait_until)
    wait_until(lambda: client.get_queue_properties().approximate_message_count == 0, timeout=30)


def test_async_function_gets_its_message(
    sample_host: LocalHost, queue_factory: Callable[..., Any], wait_until: Callable[..., Any]
) -> None:
    body = f"async-{uuid.uuid4()}".encode()
    queue_factory("devhost-sample-async").send_message(b64(body))
    assert recorded(sample_host, "async_record", body, wait_until)["dequeue_count"] == 1


def test_failing_function_moves_message_to_poison_after_max_dequeue_count(
    sample_host: LocalHost,
    queue_factory: Callable[..., Any],
    wait_until: Callable[..., Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="devhost")
    text = b64(f"fail-{uuid.uuid4()}".encode())
    sent = queue_factory("devhost-sample-fail").send_message(text)
    poison: QueueClient = queue_factory("devhost-sample-fail-poison")
    found = wait_until(lambda: [m for m in poison.peek_messages(max_messages=32) if m.content == text], timeout=30)
    assert len(found) == 1
    attempts = [a["dequeue_count"] for a in sample_host.app_module.FAILED_ATTEMPTS if a["id"] == sent.id]
    assert attempts == [1, 2]
    assert any("MaxDequeueCount of 2" in r.getMessage() for r in caplog.records)
    assert queue_factory("devhost-sample-fail").peek_messages() == []


def test_undecodable_base64_is_poisoned_without_invoking(
    sample_host: LocalHost, queue_factory: Callable[..., Any], wait_until: Callable[..., Any]
) -> None:
    text = f"not base64 {uuid.uuid4()}!"
    queue_factory("devhost-sample-in").send_message(text)
    poison: QueueClient = queue_factory("devhost-sample-in-poison")
    wait_until(lambda: any(m.content == text for m in poison.peek_messages(max_messages=32)), timeout=30)


def test_none_encoding_batches_and_visibility_timeout(
    make_app: Callable[..., Path], storage_env: str, queue_factory: Callable[..., Any], wait_until: Callable[..., Any]
) -> None:
    queue = f"devhost-plain-{uuid.uuid4().hex[:8]}"
    app_dir = make_app(
        """
        import threading, time
        import azure.functions as func
        app = func.FunctionApp()
        SEEN, ACTIVE, PEAK, LOCK = [], [0], [0], threading.Lock()

        @app.queue_trigger(arg_name="msg", queue_name="%PLAIN_QUEUE%", connection="AzureWebJobsStorage")
        def plain(msg: func.QueueMessage) -> None:
            with LOCK:
                ACTIVE[0] += 1
                PEAK[0] = max(PEAK[0], ACTIVE[0])
            time.sleep(0.3)
            with LOCK:
                ACTIVE[0] -= 1
            SEEN.append((msg.get_body().decode(), msg.dequeue_count, time.monotonic()))
            if msg.get_body() == b"retry-once" and msg.dequeue_count == 1:
                raise RuntimeError("first attempt fails")
        """,
        host_json={
            "version": "2.0",
            "extensions": {
                "queues": {
                    "messageEncoding": "none",
                    "batchSize": 4,
                    "newBatchThreshold": 2,
                    "maxPollingInterval": "00:00:00.5",
                    "visibilityTimeout": "00:00:01",
                }
            },
        },
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLAIN_QUEUE", queue)
        with LocalHost(app_dir) as host:
            client: QueueClient = queue_factory(queue)
            for i in range(8):
                client.send_message(f"plain text {i}")
            wait_until(lambda: len(host.app_module.SEEN) >= 8, timeout=30)
            assert sorted(body for body, _, _ in host.app_module.SEEN) == [f"plain text {i}" for i in range(8)]
            assert 2 <= host.app_module.PEAK[0] <= 6  # batchSize + newBatchThreshold at most

            client.send_message("retry-once")
            wait_until(lambda: [s for s in host.app_module.SEEN if s[0] == "retry-once" and s[1] == 2], timeout=30)
            first, second = [s[2] for s in host.app_module.SEEN if s[0] == "retry-once"]
            assert second - first >= 1.0  # visibilityTimeout before the retry


def test_stop_is_quick_with_a_slow_function_running(
    make_app: Callable[..., Path], storage_env: str, queue_factory: Callable[..., Any], wait_until: Callable[..., Any]
) -> None:
    queue = f"devhost-slow-{uuid.uuid4().hex[:8]}"
    app_dir = make_app(f"""
        import time
        import azure.functions as func
        app = func.FunctionApp()
        STARTED = []

        @app.queue_trigger(arg_name="msg", queue_name="{queue}", connection="AzureWebJobsStorage")
        def slow(msg: func.QueueMessage) -> None:
            STARTED.append(msg.id)
            time.sleep(2.5)
        """)
    host = LocalHost(app_dir, stop_timeout=1.0).start()
    try:
        queue_factory(queue).send_message(b64(b"slow"))
        wait_until(lambda: host.app_module.STARTED, timeout=30)
    finally:
        began = time.monotonic()
        host.stop()
    assert time.monotonic() - began < 2.0


def test_workers_deleting_at_once_keep_their_connections(
    make_app: Callable[..., Path],
    storage_env: str,
    queue_factory: Callable[..., Any],
    wait_until: Callable[..., Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every worker of a listener may delete its message at the same moment; the queue client keeps a
    connection for each (requests' default of 10 would drop the rest with "Connection pool is full")."""
    queue = f"devhost-together-{uuid.uuid4().hex[:8]}"
    app_dir = make_app(
        """
        import asyncio, time
        import azure.functions as func
        app = func.FunctionApp()
        DONE, FIRST = [], []

        @app.queue_trigger(arg_name="msg", queue_name="%TOGETHER_QUEUE%", connection="AzureWebJobsStorage")
        async def together(msg: func.QueueMessage) -> None:
            FIRST.append(FIRST[0] if FIRST else time.monotonic())
            await asyncio.sleep(max(0.0, FIRST[0] + 2.0 - time.monotonic()))  # all answer at one moment
            DONE.append(msg.id)
        """,
        host_json={
            "version": "2.0",
            "extensions": {"queues": {"batchSize": 16, "newBatchThreshold": 8, "maxPollingInterval": "00:00:00.5"}},
        },
    )
    caplog.set_level(logging.WARNING, logger="urllib3.connectionpool")
    client: QueueClient = queue_factory(queue)
    for i in range(24):
        client.send_message(b64(f"together {i}".encode()))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOGETHER_QUEUE", queue)
        with LocalHost(app_dir) as host:
            wait_until(lambda: len(host.app_module.DONE) == 24, timeout=30)
            wait_until(lambda: client.get_queue_properties().approximate_message_count == 0, timeout=30)
    assert not [r for r in caplog.records if "Connection pool is full" in r.getMessage()]
