"""ServiceBusQueue and ServiceBusTopic actions through the real SDK to a real AMQP peer (python-qpid-proton)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, quote

from shared.actions.service_bus import ServiceBusTarget
from shared.model import JobErrorAction
from shared.settings import Settings
from tests.executor.peers.amqp import AmqpPeer
from tests.executor.support import context

KEY_NAME, KEY = "SchedulerPolicy", "c2VjcmV0LWtleS12YWx1ZQ=="


def bus_action(kind: str, entity: str, **extra: object) -> JobErrorAction:
    member, entity_field = (
        ("serviceBusTopicMessage", "topicPath")
        if kind == "ServiceBusTopic"
        else ("serviceBusQueueMessage", "queueName")
    )
    return JobErrorAction.model_validate(
        {
            "type": kind,
            member: {
                entity_field: entity,
                "namespace": "contoso-ns",
                "message": "Hello from the scheduler",
                "transportType": "netMessaging",
                "authentication": {"sasKeyName": KEY_NAME, "sasKey": KEY, "type": "SharedAccessKey"},
                **extra,
            },
        }
    )


def target(settings: Settings, peer: AmqpPeer) -> ServiceBusTarget:
    return ServiceBusTarget(replace(settings, service_bus_endpoint=peer.endpoint), timeout=10)


def test_queue_message_carries_body_brokered_and_custom_properties(settings: Settings, amqp_peer: AmqpPeer) -> None:
    ctx = context()
    enqueue_at = datetime(2026, 3, 1, 13, 0, tzinfo=UTC)
    action = bus_action(
        "ServiceBusQueue",
        "orders",
        customMessageProperties={"appname": "FromScheduler", "x-ms-scheduler-jobid": "spoofed"},
        brokeredMessageProperties={
            "contentType": "text/plain",
            "correlationId": "corr-1",
            "label": "the-label",
            "messageId": "msg-1",
            "replyTo": "replies",
            "timeToLive": "01:00:00",
            "to": "someone",
            "forcePersistence": True,
            "scheduledEnqueueTimeUtc": enqueue_at.isoformat(),
            "viaPartitionKey": "via-1",
        },
    )
    result = target(settings, amqp_peer).run(action, ctx)
    assert result.succeeded, result.message
    assert result.message == (
        "ServiceBusQueue Action - The message was successfully sent to queue 'orders' of namespace 'contoso-ns'"
    )
    [received] = amqp_peer.wait_for(1, 5)
    message = received.message
    assert received.address.endswith("/orders")
    assert bytes(message.body).decode() == "Hello from the scheduler"
    assert (message.id, message.correlation_id, message.subject, message.reply_to, message.address) == (
        "msg-1",
        "corr-1",
        "the-label",
        "replies",
        "someone",
    )
    assert str(message.content_type) == "text/plain"
    assert message.ttl == 3600 and message.durable
    annotations = {str(k): v for k, v in message.annotations.items()}
    assert annotations["x-opt-via-partition-key"] == "via-1"
    assert int(annotations["x-opt-scheduled-enqueue-time"]) == int(enqueue_at.timestamp() * 1000)  # AMQP ms
    assert message.properties == {
        "appname": "FromScheduler",
        "x-ms-scheduler-jobid": "job1",
        "x-ms-scheduler-jobcollectionid": "jc1",
        "x-ms-scheduler-expected-execution-time": "2026-03-01T12:00:00Z",
        "x-ms-scheduler-execution-region": "local",
        "x-ms-execution-tag": ctx.execution_id,
        "x-ms-client-request-id": ctx.client_request_id,
        "x-ms-scheduler-attempt": "1",
        # W3C trace context on every message, telemetry on or off (here off: a fresh unsampled trace).
        "traceparent": ctx.extra_headers["traceparent"],
        "Diagnostic-Id": ctx.extra_headers["traceparent"],
    }


def test_the_sas_token_is_signed_with_the_jobs_key(settings: Settings, amqp_peer: AmqpPeer) -> None:
    assert target(settings, amqp_peer).run(bus_action("ServiceBusTopic", "events"), context()).succeeded
    [received] = amqp_peer.wait_for(1, 5)
    assert received.address.endswith("/events")
    audience, token = amqp_peer.tokens[-1]
    assert token.startswith("SharedAccessSignature ")
    fields = {k: v[0] for k, v in parse_qs(token.removeprefix("SharedAccessSignature ")).items()}
    assert fields["skn"] == KEY_NAME and fields["sr"] == audience
    expected = base64.b64encode(
        hmac.new(KEY.encode(), f"{quote(fields['sr'], safe='')}\n{fields['se']}".encode(), hashlib.sha256).digest()
    ).decode()
    assert fields["sig"] == expected
    assert int(fields["se"]) > (datetime.now(UTC) + timedelta(minutes=5)).timestamp()


def test_a_refused_token_fails_the_attempt(settings: Settings, amqp_peer: AmqpPeer) -> None:
    amqp_peer.refuse_tokens = True
    result = target(settings, amqp_peer).run(bus_action("ServiceBusQueue", "orders"), context())
    assert not result.succeeded
    assert result.message.startswith(
        "ServiceBusQueue Action - Sending to queue 'orders' of namespace 'contoso-ns' failed: "
    )
    assert KEY not in result.message and amqp_peer.received == []


def test_missing_key_and_unreachable_namespace_fail(settings: Settings, amqp_peer: AmqpPeer) -> None:
    bus = target(settings, amqp_peer)
    no_key = bus.run(bus_action("ServiceBusQueue", "orders", authentication=None), context())
    assert no_key.message.endswith("was not sent: sasKeyName and sasKey are required")
    inconsistent = bus.run(
        bus_action("ServiceBusQueue", "orders", brokeredMessageProperties={"sessionId": "a", "partitionKey": "b"}),
        context(),
    )
    assert not inconsistent.succeeded and "inconsistent" in inconsistent.message
    unreachable = ServiceBusTarget(replace(settings, service_bus_endpoint="sb://127.0.0.1:9"), timeout=3)
    down = unreachable.run(bus_action("ServiceBusQueue", "orders"), context())
    assert not down.succeeded and "failed" in down.message
    assert down.unreachable and down.pushback is None  # its circuit counts it (executor/destinations.py)
