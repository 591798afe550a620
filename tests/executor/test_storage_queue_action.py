"""StorageQueue actions against the real Azurite, authenticated by a SAS from `generate_queue_sas`."""

from __future__ import annotations

import base64
import uuid
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from azure.storage.queue import (
    AccountSasPermissions,
    QueueSasPermissions,
    QueueServiceClient,
    ResourceTypes,
    generate_account_sas,
    generate_queue_sas,
)

from devhost.azurite import ACCOUNT_KEY, ACCOUNT_NAME
from shared.actions.base import PushBack
from shared.actions.storage_queue import StorageQueueTarget, queue_endpoint
from shared.model import JobErrorAction
from shared.settings import Settings
from tests.executor.peers.servers import serve
from tests.executor.support import context


def make_queue(settings: Settings) -> tuple[str, str]:
    """A fresh queue in Azurite and an add-only SAS for it."""
    name = f"target-{uuid.uuid4().hex[:12]}"
    service = QueueServiceClient.from_connection_string(settings.storage.connection_string or "")
    service.create_queue(name)
    sas = generate_queue_sas(
        ACCOUNT_NAME,
        name,
        ACCOUNT_KEY,
        permission=QueueSasPermissions(add=True),
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )
    return name, sas


def read_back(settings: Settings, name: str) -> list[str]:
    service = QueueServiceClient.from_connection_string(settings.storage.connection_string or "")
    return [m.content for m in service.get_queue_client(name).receive_messages(max_messages=32)]


def queue_action(
    name: str, sas: str | None, message: str = "hello <queue> & co", account: str = ACCOUNT_NAME
) -> JobErrorAction:
    return JobErrorAction.model_validate(
        {
            "type": "StorageQueue",
            "queueMessage": {"storageAccount": account, "queueName": name, "sasToken": sas, "message": message},
        }
    )


def test_envelope_is_posted_with_the_sas(settings: Settings) -> None:
    name, sas = make_queue(settings)
    ctx = context()
    result = StorageQueueTarget(settings).run(queue_action(name, "?" + sas), ctx)
    assert result.succeeded, result.message
    assert result.message == (
        f"StorageQueue Action - The message was successfully sent to queue '{name}' of storage account '{ACCOUNT_NAME}'"
    )
    [raw] = read_back(settings, name)
    text = base64.b64decode(raw).decode("utf-8")  # Base64, as the classic SDK and Functions triggers expect
    assert text.startswith('<?xml version="1.0" encoding="utf-16"?><StorageQueueMessage xmlns:xsd=')
    root = ET.fromstring(text)
    assert root.tag == "StorageQueueMessage"
    assert [(child.tag, child.text) for child in root] == [
        ("ExecutionTag", ctx.execution_id),
        ("ClientRequestId", ctx.client_request_id),
        ("ExpectedExecutionTime", "2026-03-01T12:00:00Z"),
        ("SchedulerJobId", "job1"),
        ("SchedulerJobCollectionId", "jc1"),
        ("Region", "local"),
        ("Message", "hello <queue> & co"),
    ]


def test_a_bad_or_missing_sas_fails_without_leaking_it(settings: Settings) -> None:
    name, sas = make_queue(settings)
    forged = sas.replace("sig=", "sig=AAAA")
    target = StorageQueueTarget(settings)
    result = target.run(queue_action(name, forged), context())
    assert "failed: 403 AuthenticationFailed. Locally, `scheduler local queue-sas " in result.message
    assert "sig=" not in result.message and forged.split("sig=")[1] not in result.message
    assert not target.run(queue_action(name, None), context()).succeeded
    assert read_back(settings, name) == []


def test_a_missing_queue_and_a_bad_account_name_fail(settings: Settings) -> None:
    sas = generate_account_sas(
        ACCOUNT_NAME,
        ACCOUNT_KEY,
        ResourceTypes(object=True),
        AccountSasPermissions(add=True),
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )
    target = StorageQueueTarget(settings)
    missing = target.run(queue_action("no-such-queue", sas), context())
    assert missing.message.endswith("failed: 404 QueueNotFound")
    bad = target.run(queue_action("q", sas, account="evil.example.com/x"), context())
    assert bad.message == "StorageQueue Action - 'evil.example.com/x' is not a valid storage account name"


def test_endpoint_resolution(settings: Settings) -> None:
    azurite_queue = dict(p.split("=", 1) for p in (settings.storage.connection_string or "").split(";") if p)
    assert queue_endpoint(settings, ACCOUNT_NAME) == azurite_queue["QueueEndpoint"]
    assert queue_endpoint(settings, "prodacct") == "https://prodacct.queue.core.windows.net"
    local = replace(settings, queue_endpoint_template="http://127.0.0.1:9/{account}")
    assert queue_endpoint(local, "prodacct") == "http://127.0.0.1:9/prodacct"


SERVER_BUSY = (
    b'<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code>'
    b"<Message>Ingress is over the account limit.</Message></Error>"
)


def test_a_busy_account_is_a_push_back_with_its_retry_after_and_a_5xx_or_no_answer_counts_for_its_circuit(
    settings: Settings,
) -> None:
    """ServerBusy (503) is the account's throttling: a push-back carrying its Retry-After (executor/destinations.py
    defers the attempt); a 500 and a refused connection count for the destination's circuit; a 404 for neither."""
    answers = iter(
        [(503, {"Retry-After": "3", "x-ms-error-code": "ServerBusy"}, SERVER_BUSY), (500, {}, b""), (404, {}, b"")]
    )
    server = serve(lambda hit: next(answers))
    try:
        local = replace(settings, queue_endpoint_template=f"{server.url}/{{account}}")
        target = StorageQueueTarget(local, timeout=5)
        busy = target.run(queue_action("q", "sv=2020&sig=x", account="prodacct"), context())
        broken = target.run(queue_action("q", "sv=2020&sig=x", account="prodacct"), context())
        missing = target.run(queue_action("q", "sv=2020&sig=x", account="prodacct"), context())
    finally:
        server.close()
    assert not busy.succeeded and busy.pushback == PushBack(503, 3.0) and not busy.unreachable
    assert "failed: 503 ServerBusy" in busy.message
    assert not broken.succeeded and broken.pushback is None and broken.unreachable
    assert not missing.succeeded and missing.pushback is None and not missing.unreachable
    refused = replace(settings, queue_endpoint_template="http://127.0.0.1:9/{account}")  # nothing listens on 9
    down = StorageQueueTarget(refused, timeout=5).run(queue_action("q", "sv=2020&sig=x", account="prodacct"), context())
    assert not down.succeeded and down.unreachable and down.pushback is None
