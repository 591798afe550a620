"""Trace context where it leaves the scheduler: Service Bus application properties, occurrence messages
(old ones without it still run), and, while telemetry is off, a fresh unsampled `traceparent` on every call
to a target (never in the occurrence message: nothing records that trace)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from shared.keys import JobKey
from shared.model import JobState
from shared.occurrence import OccurrenceMessage
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.queues import ShardTask
from shared.telemetry import TelemetrySettings
from shared.telemetry.setup import AZURE_MONITOR, CONSOLE, OTLP
from tests.executor.peers.amqp import AmqpPeer, RunningPeer
from tests.executor.peers.servers import Server, serve
from tests.executor.support import job_status, make_collection, put_job
from tests.support.scheduler_client import drain


@pytest.fixture
def peer() -> Iterator[AmqpPeer]:
    with RunningPeer() as running:
        yield running


@pytest.fixture
def target() -> Iterator[Server]:
    server = serve(lambda hit: (200, {}, b""))
    yield server
    server.close()


def test_a_service_bus_message_carries_the_attempts_trace_context(
    settings: Settings, peer: AmqpPeer, otel, storage
) -> None:
    rt = Runtime.create(replace(settings, service_bus_endpoint=peer.endpoint), storage=storage)
    make_collection(rt)
    put_job(
        rt,
        "bus",
        {
            "action": {
                "type": "ServiceBusQueue",
                "serviceBusQueueMessage": {
                    "queueName": "orders",
                    "namespace": "contoso-ns",
                    "message": "hi",
                    "transportType": "AMQP",
                    "authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "c2VjcmV0"},
                },
            }
        },
    )
    drain(rt, 30, until=lambda: job_status(rt, "bus").state != JobState.ENABLED)

    (attempt,) = otel.spans("execute occurrence")
    assert attempt.attributes["scheduler.outcome"] == "succeeded"
    assert attempt.attributes["scheduler.action.type"] == "ServiceBusQueue"
    [received] = peer.wait_for(1, 5)
    properties = received.message.properties
    expected = f"00-{attempt.context.trace_id:032x}-{attempt.context.span_id:016x}"
    assert properties["Diagnostic-Id"][:52] == expected
    assert properties["traceparent"] == properties["Diagnostic-Id"]


UNSAMPLED = re.compile(r"^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-00$")


def test_without_telemetry_every_http_action_still_carries_a_fresh_unsampled_traceparent(
    runtime: Runtime, target: Server
) -> None:
    make_collection(runtime)
    for name in ("quiet", "calm"):
        put_job(runtime, name, {"action": {"type": "Http", "request": {"uri": target.url, "method": "GET"}}})
    assert all("tp" not in json.loads(m.content) for m in runtime.store.queue.client.peek_messages(max_messages=32))
    drain(runtime, 30, until=lambda: all(job_status(runtime, n).state != JobState.ENABLED for n in ("quiet", "calm")))
    sent = [hit.headers.get("traceparent") or hit.headers.get("Traceparent") for hit in target.hits]
    assert len(sent) == 2 and all(UNSAMPLED.match(value or "") for value in sent), sent  # sampled flag off
    assert len({value.split("-")[1] for value in sent if value}) == 2  # a trace of its own for each call


def test_without_telemetry_a_service_bus_message_still_carries_trace_context(
    settings: Settings, peer: AmqpPeer, storage
) -> None:
    rt = Runtime.create(replace(settings, service_bus_endpoint=peer.endpoint), storage=storage)
    make_collection(rt)
    put_job(
        rt,
        "bus",
        {
            "action": {
                "type": "ServiceBusQueue",
                "serviceBusQueueMessage": {
                    "queueName": "orders",
                    "namespace": "contoso-ns",
                    "message": "hi",
                    "transportType": "AMQP",
                    "authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "c2VjcmV0"},
                },
            }
        },
    )
    drain(rt, 30, until=lambda: job_status(rt, "bus").state != JobState.ENABLED)
    [received] = peer.wait_for(1, 5)
    properties = received.message.properties
    assert UNSAMPLED.match(properties["traceparent"]) and properties["Diagnostic-Id"] == properties["traceparent"]


def test_occurrence_messages_with_and_without_trace_context_read_back() -> None:
    due = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    old = (
        '{"v":1,"job":["s","g","c","j"],"occurrence":"2026-03-01T12:00:00Z","due":"2026-03-01T12:00:00Z",'
        '"trigger":"schedule","action":"MainAction","attempt":0,"generation":3}'
    )
    assert OccurrenceMessage.from_json(old) == OccurrenceMessage(JobKey("s", "g", "c", "j"), due, due, generation=3)
    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    stamped = replace(OccurrenceMessage.from_json(old), traceparent=traceparent)
    assert json.loads(stamped.to_json())["tp"] == traceparent
    assert OccurrenceMessage.from_json(stamped.to_json()) == stamped


@pytest.mark.parametrize(
    ("env", "destination"),
    [
        ({}, None),
        ({"APPLICATIONINSIGHTS_CONNECTION_STRING": "InstrumentationKey=x"}, AZURE_MONITOR),
        ({"APPLICATIONINSIGHTS_CONNECTION_STRING": "InstrumentationKey=x", "SCHEDULER_TELEMETRY": "off"}, None),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, OTLP),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, None),
        ({"SCHEDULER_TELEMETRY_CONSOLE": "true"}, CONSOLE),
    ],
)
def test_the_destination_follows_the_settings(env: dict[str, str], destination: str | None) -> None:
    assert TelemetrySettings.from_environment(env).destination == destination


def test_dispatch_tasks_with_and_without_trace_context_read_back() -> None:
    old = ShardTask.from_json('{"bucket":"202603011200","shard":3}')
    assert old == ShardTask("202603011200", 3) and old.traceparent is None
    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    stamped = ShardTask.from_json(ShardTask("202603011200", 3, traceparent).to_json())
    assert stamped.traceparent == traceparent


def test_the_export_authenticates_with_the_identity_the_functions_host_uses() -> None:
    from azure.identity import ManagedIdentityCredential

    from shared.telemetry.setup import credential_from

    assert isinstance(
        credential_from("Authorization=AAD;ClientId=00000000-0000-0000-0000-000000000001"), ManagedIdentityCredential
    )
    assert isinstance(credential_from("Authorization=AAD"), ManagedIdentityCredential)
    assert credential_from(None) is None and credential_from("Authorization=Other") is None
