"""ServiceBusQueue and ServiceBusTopic actions: one message sent with `azure-servicebus` over AMQP.

Authentication is the job's SAS key name and key. The namespace host is
`{namespace}.servicebus.windows.net`; SCHEDULER_SERVICEBUS_ENDPOINT (`sb://host:port`) replaces it
for a local emulator or peer, which is spoken to as the Service Bus emulator is: plain AMQP, no TLS
(the SDK's `UseDevelopmentEmulator=true`). `transportType` is accepted and ignored: NetMessaging
no longer exists, so both values go over AMQP (docs/decisions.md).

brokeredMessageProperties map onto the SDK's message fields (label -> subject; forcePersistence ->
the AMQP `durable` header; viaPartitionKey -> the `x-opt-via-partition-key` annotation, as the
.NET client sent it); customMessageProperties and the scheduler metadata (the x-ms-* names of the
HTTP headers, which users cannot override) become application properties.

A connection is opened per attempt and closed after it: a scheduler sends rarely to any one
namespace, and an idle AMQP connection held across attempts would only be one more thing to fail.
The SDK's own retries are off: the job's retry policy is the retry.
"""

from __future__ import annotations

import re
from typing import Any

from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.amqp import AmqpMessageHeader
from azure.servicebus.exceptions import (
    OperationTimeoutError,
    ServiceBusCommunicationError,
    ServiceBusConnectionError,
    ServiceBusError,
    ServiceBusServerBusyError,
)

from ..model import JobActionType, JobErrorAction
from ..model import ServiceBusMessage as Wire
from ..settings import Settings
from .base import ActionResult, ExecutionContext, PushBack
from .http import scheduler_headers

# Service Bus names no wait with ServerBusy; its guidance is to back off about 10 s (the SDK's own wait).
SERVER_BUSY_WAIT = 10.0

TIMEOUT_SECONDS = 60
# Namespace names: 6-50 letters, digits and hyphens. Anything else could steer the host name.
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,48}[A-Za-z0-9]$")
_TOKEN_VALUE = re.compile(r"^[^;]*$")  # a connection-string value may not contain ';'


class _Invalid(Exception):
    """The action cannot be sent as defined; the message is safe for history."""


def connection_string(settings: Settings, wire: Wire) -> str:
    """The SDK connection string for the action's namespace and SAS key (never logged: it holds the key)."""
    authentication = wire.authentication
    name = (authentication.sas_key_name if authentication else None) or ""
    key = (authentication.sas_key if authentication else None) or ""
    if not name or not key:
        raise _Invalid("sasKeyName and sasKey are required")
    if not _TOKEN_VALUE.match(name) or not _TOKEN_VALUE.match(key):
        raise _Invalid("sasKeyName and sasKey may not contain ';'")
    if settings.service_bus_endpoint:
        endpoint = settings.service_bus_endpoint.rstrip("/")
        return f"Endpoint={endpoint}/;SharedAccessKeyName={name};SharedAccessKey={key};UseDevelopmentEmulator=true"
    namespace = wire.namespace or ""
    if not _NAMESPACE.match(namespace):
        raise _Invalid(f"'{namespace}' is not a valid Service Bus namespace name")
    return f"Endpoint=sb://{namespace}.servicebus.windows.net/;SharedAccessKeyName={name};SharedAccessKey={key}"


def outgoing_message(wire: Wire, context: ExecutionContext) -> ServiceBusMessage:
    """The SDK message: body, brokered properties, custom properties and the scheduler metadata."""
    properties: dict[str | bytes, Any] = {k: v for k, v in (wire.custom_message_properties or {}).items()}
    properties.update(scheduler_headers(context))
    if traceparent := context.extra_headers.get("traceparent"):  # W3C trace context, as the Service Bus SDKs set it
        properties.update({"Diagnostic-Id": traceparent, "traceparent": traceparent})
    brokered = wire.brokered_message_properties
    fields: dict[str, Any] = {}
    if brokered is not None:
        fields = {
            "content_type": brokered.content_type,
            "correlation_id": brokered.correlation_id,
            "subject": brokered.label,
            "message_id": brokered.message_id,
            "partition_key": brokered.partition_key,
            "reply_to": brokered.reply_to,
            "reply_to_session_id": brokered.reply_to_session_id,
            "scheduled_enqueue_time_utc": brokered.scheduled_enqueue_time_utc,
            "session_id": brokered.session_id,
            "time_to_live": brokered.time_to_live,
            "to": brokered.to,
        }
    # The occurrence's identity as MessageId, so a queue or topic with duplicate detection drops a repeat of
    # the occurrence (a retry after a send whose answer was lost, a redelivery); a messageId the job sets wins.
    fields["message_id"] = fields.get("message_id") or context.execution_id
    try:
        message = ServiceBusMessage(
            wire.message or "", application_properties=properties, **{k: v for k, v in fields.items() if v is not None}
        )
    except (ValueError, TypeError) as exc:  # e.g. partitionKey differing from sessionId, which the broker refuses
        raise _Invalid(f"brokeredMessageProperties are inconsistent: {exc}") from exc
    if brokered is not None and brokered.force_persistence:
        # Amend the header the SDK built: it already carries time_to_live.
        header = message.raw_amqp_message.header or AmqpMessageHeader()
        header.durable = True
        message.raw_amqp_message.header = header
    if brokered is not None and brokered.via_partition_key:
        annotations = dict(message.raw_amqp_message.annotations or {})
        annotations["x-opt-via-partition-key"] = brokered.via_partition_key
        message.raw_amqp_message.annotations = annotations
    return message


class ServiceBusTarget:
    """Runs ServiceBusQueue and ServiceBusTopic actions (the two differ only in the entity they name)."""

    def __init__(self, settings: Settings, timeout: float = TIMEOUT_SECONDS) -> None:
        self.settings = settings
        self.timeout = timeout

    def run(self, action: JobErrorAction, context: ExecutionContext) -> ActionResult:
        is_topic = action.type == JobActionType.SERVICE_BUS_TOPIC
        wire: Wire | None
        if is_topic:
            wire = action.service_bus_topic_message
            entity = wire.topic_path if wire else None
        else:
            wire = action.service_bus_queue_message
            entity = wire.queue_name if wire else None
        assert wire is not None, "validation guarantees a Service Bus action has its message"
        entity = entity or ""
        kind = "ServiceBusTopic" if is_topic else "ServiceBusQueue"
        where = f"{'topic' if is_topic else 'queue'} '{entity}' of namespace '{wire.namespace}'"
        try:
            if not entity:
                raise _Invalid(f"the {'topicPath' if is_topic else 'queueName'} is missing")
            text = connection_string(self.settings, wire)
            message = outgoing_message(wire, context)
            self._send(text, entity, is_topic, message)
        except _Invalid as exc:
            return ActionResult(False, f"{kind} Action - The message for {where} was not sent: {exc}")
        except ServiceBusServerBusyError as exc:  # the namespace's throttling: push-back, as a 503 is
            failed = f"{kind} Action - Sending to {where} failed: {_describe(exc)}"
            return ActionResult(False, failed, pushback=PushBack(503, SERVER_BUSY_WAIT))
        except (ServiceBusConnectionError, ServiceBusCommunicationError, OperationTimeoutError) as exc:
            failed = f"{kind} Action - Sending to {where} failed: {_describe(exc)}"
            return ActionResult(False, failed, unreachable=True)
        except ServiceBusError as exc:
            return ActionResult(False, f"{kind} Action - Sending to {where} failed: {_describe(exc)}")
        except (OSError, ValueError) as exc:
            failed = f"{kind} Action - Sending to {where} failed: {type(exc).__name__}"
            return ActionResult(False, failed, unreachable=isinstance(exc, OSError))
        return ActionResult(True, f"{kind} Action - The message was successfully sent to {where}")

    def _send(self, text: str, entity: str, is_topic: bool, message: ServiceBusMessage) -> None:
        client = ServiceBusClient.from_connection_string(
            text,
            retry_total=0,
            try_timeout=self.timeout,
            auth_timeout=self.timeout,
        )
        with client:
            sender = (
                client.get_topic_sender(topic_name=entity) if is_topic else client.get_queue_sender(queue_name=entity)
            )
            with sender:
                sender.send_messages(message, timeout=self.timeout)


def _describe(exc: ServiceBusError) -> str:
    # The SDK's messages name the entity and the AMQP condition, never the key.
    return f"{type(exc).__name__}: {str(exc.message if hasattr(exc, 'message') else exc).splitlines()[0][:300]}"
