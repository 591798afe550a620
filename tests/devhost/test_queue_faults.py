"""The queue trigger under slow storage: each message is handed over as soon as it is read, never held
while the poller asks for more (the storage link goes through the test suite's fault proxy).

The trickle is shaped so that a poller that pages on until its batch fills shows unmistakably: a message
arrives faster than storage answers, so every page finds one, and the batch fills only with the last
message. Such a poller handed out nothing before the last send and held the first message ~17 s; this one
hands each over within ~2 s (two round trips). The checks leave a loaded machine ample room between the two.
"""

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

LATENCY = 1.0  # added to every storage answer
INTERVAL = 0.5  # between sends: shorter than a receive's round trip, so a paging poller never sees an empty page
BATCH = 32  # the app's host.json batchSize, and the number of messages sent


def test_slow_storage_delays_a_message_by_its_round_trips_only(
    make_app: Callable[..., Path], azurite: Azurite, queue_factory: Callable[..., Any], wait_until: Callable[..., Any]
) -> None:
    queue = f"devhost-slow-storage-{uuid.uuid4().hex[:8]}"
    app_dir = make_app(
        f"""
        import time
        import azure.functions as func
        app = func.FunctionApp()
        SEEN = []

        @app.queue_trigger(arg_name="msg", queue_name="{queue}", connection="AzureWebJobsStorage")
        def record(msg: func.QueueMessage) -> None:
            SEEN.append((msg.get_body().decode(), time.monotonic()))
        """,
        host_json={
            "version": "2.0",
            "extensions": {"queues": {"maxPollingInterval": "00:00:00.5", "batchSize": BATCH}},
        },
    )
    faults = StorageFaults(azurite.connection_string)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("AzureWebJobsStorage", faults.connection_string)
            with LocalHost(app_dir) as host:
                faults.set_mode("latency", latency=LATENCY)
                client = queue_factory(queue)
                sent = {}
                for i in range(BATCH):
                    sent[str(i)] = time.monotonic()
                    client.send_message(base64.b64encode(str(i).encode()).decode())
                    time.sleep(INTERVAL)
                wait_until(lambda: len(host.app_module.SEEN) >= len(sent), timeout=60)
                seen = list(host.app_module.SEEN)
                # Not a timing bound: messages went to the function while later ones were still being sent.
                assert min(at for _, at in seen) < max(sent.values()), (seen, sent)
                # The poll in flight, the receive that finds it, and its answer (about 2 s here); a bound
                # four times that, and half of what paging until the batch fills costs.
                waits = [at - sent[body] for body, at in seen]
                assert max(waits) < 8.0, waits
    finally:
        faults.close()
