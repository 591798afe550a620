"""The queue trigger under slow storage: each message is handed over as soon as it is read, never held
while the poller asks for more (the storage link goes through the test suite's fault proxy)."""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devhost.azurite import Azurite
from devhost.host import LocalHost
from tests.support.fault_proxy import StorageFaults


def test_slow_storage_delays_a_message_by_its_round_trips_only(make_app: Callable[..., Path], azurite: Azurite,
                                                               queue_factory: Callable[..., Any],
                                                               wait_until: Callable[..., Any]) -> None:
    queue = f"devhost-slow-storage-{uuid.uuid4().hex[:8]}"
    app_dir = make_app(f"""
        import time
        import azure.functions as func
        app = func.FunctionApp()
        SEEN = []

        @app.queue_trigger(arg_name="msg", queue_name="{queue}", connection="AzureWebJobsStorage")
        def record(msg: func.QueueMessage) -> None:
            SEEN.append((msg.get_body().decode(), time.monotonic()))
        """, host_json={"version": "2.0", "extensions": {"queues": {"maxPollingInterval": "00:00:00.5"}}})
    faults = StorageFaults(azurite.connection_string)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("AzureWebJobsStorage", faults.connection_string)
            with LocalHost(app_dir) as host:
                faults.set_mode("latency", latency=0.5)  # every storage answer takes half a second more
                client = queue_factory(queue)
                sent = {}
                for i in range(24):  # a steady trickle: every poll finds something, no batch ever fills
                    sent[str(i)] = time.monotonic()
                    client.send_message(base64.b64encode(str(i).encode()).decode())
                    time.sleep(0.25)
                wait_until(lambda: len(host.app_module.SEEN) >= len(sent), timeout=60)
                # Polls in flight, the receive that finds it, and its answer: a few round trips, not the
                # paging of a whole batch.
                waits = [at - sent[body] for body, at in host.app_module.SEEN]
                assert max(waits) < 3.0, waits
    finally:
        faults.close()
