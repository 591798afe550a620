"""What a job does: JobAction / JobErrorAction and their targets, with write-only secrets."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, ClassVar

from pydantic import Field

from .base import CamelCaseOnOutput, WireModel
from .concurrency import AsyncCompletion
from .durations import Duration
from .enums import (
    HttpAuthenticationType,
    JobActionType,
    RetryType,
    ServiceBusAuthenticationType,
    ServiceBusTransportType,
)
from .instants import UtcDateTime


class HttpAuthentication(WireModel):
    """One object for the spec's polymorphic HttpAuthentication; `type` says which members apply."""

    secrets: ClassVar[frozenset[str]] = frozenset({"password", "pfx", "secret"})

    # ClientCertificate
    pfx: str | None = Field(default=None, description="Base64 PFX (write-only).", json_schema_extra={"writeOnly": True})
    password: str | None = Field(default=None, json_schema_extra={"writeOnly": True})
    certificate_thumbprint: str | None = Field(default=None, alias="certificateThumbprint")
    certificate_expiration_date: UtcDateTime | None = Field(default=None, alias="certificateExpirationDate")
    certificate_subject_name: str | None = Field(default=None, alias="certificateSubjectName")
    # Basic
    username: str | None = None
    # ActiveDirectoryOAuth; ManagedIdentity (newer api-version) takes `audience` and an optional `clientId` (a
    # user-assigned identity's) and nothing secret: the token is the Function app's own identity's.
    secret: str | None = Field(default=None, json_schema_extra={"writeOnly": True})
    tenant: str | None = None
    audience: str | None = None
    client_id: str | None = Field(default=None, alias="clientId")
    type: HttpAuthenticationType


class HttpRequest(WireModel):
    uri: str
    method: str
    headers: dict[str, str] | None = None
    body: str | None = None
    authentication: HttpAuthentication | None = None
    # Newer api-version only (concurrency.py).
    async_completion: AsyncCompletion | None = Field(
        default=None,
        alias="asyncCompletion",
        description="The target works asynchronously: a 202 Accepted with a Location is polled until a final "
        "status or the deadline, and the attempt's outcome is the work's.",
    )


class StorageQueueMessage(WireModel):
    secrets: ClassVar[frozenset[str]] = frozenset({"sasToken"})

    storage_account: str = Field(alias="storageAccount")
    queue_name: str = Field(alias="queueName")
    sas_token: str | None = Field(default=None, alias="sasToken", json_schema_extra={"writeOnly": True})
    message: str | None = None


class ServiceBusAuthentication(WireModel):
    secrets: ClassVar[frozenset[str]] = frozenset({"sasKey"})

    sas_key: str | None = Field(default=None, alias="sasKey", json_schema_extra={"writeOnly": True})
    sas_key_name: str | None = Field(default=None, alias="sasKeyName")
    type: Annotated[ServiceBusAuthenticationType, CamelCaseOnOutput] | None = None


class ServiceBusBrokeredMessageProperties(WireModel):
    content_type: str | None = Field(default=None, alias="contentType")
    correlation_id: str | None = Field(default=None, alias="correlationId")
    force_persistence: bool | None = Field(default=None, alias="forcePersistence")
    label: str | None = None
    message_id: str | None = Field(default=None, alias="messageId")
    partition_key: str | None = Field(default=None, alias="partitionKey")
    reply_to: str | None = Field(default=None, alias="replyTo")
    reply_to_session_id: str | None = Field(default=None, alias="replyToSessionId")
    scheduled_enqueue_time_utc: UtcDateTime | None = Field(default=None, alias="scheduledEnqueueTimeUtc")
    session_id: str | None = Field(default=None, alias="sessionId")
    time_to_live: Duration | None = Field(default=None, alias="timeToLive")
    to: str | None = None
    via_partition_key: str | None = Field(default=None, alias="viaPartitionKey")


class ServiceBusMessage(WireModel):
    authentication: ServiceBusAuthentication | None = None
    brokered_message_properties: ServiceBusBrokeredMessageProperties | None = Field(
        default=None, alias="brokeredMessageProperties"
    )
    custom_message_properties: dict[str, str] | None = Field(default=None, alias="customMessageProperties")
    message: str | None = None
    namespace: str | None = None
    transport_type: Annotated[ServiceBusTransportType, CamelCaseOnOutput] | None = Field(
        default=None, alias="transportType"
    )


class ServiceBusQueueMessage(ServiceBusMessage):
    queue_name: str | None = Field(default=None, alias="queueName")


class ServiceBusTopicMessage(ServiceBusMessage):
    topic_path: str | None = Field(default=None, alias="topicPath")


class RetryPolicy(WireModel):
    retry_type: Annotated[RetryType, CamelCaseOnOutput] | None = Field(default=None, alias="retryType")
    retry_interval: Duration | None = Field(default=None, alias="retryInterval")
    retry_count: Annotated[int, Field(ge=0, le=20)] | None = Field(default=None, alias="retryCount")
    max_retry_interval: Duration | None = Field(
        default=None,
        alias="maxRetryInterval",
        description="Extension for retryType Exponential: the cap of the doubling interval (default PT1H).",
    )


# Applied, never echoed, when a job has no retryPolicy or a Fixed one without values (docs/decisions.md).
DEFAULT_RETRY_INTERVAL = timedelta(seconds=30)
DEFAULT_RETRY_COUNT = 4
DEFAULT_MAX_RETRY_INTERVAL = timedelta(hours=1)


class JobErrorAction(WireModel):
    """Same members as JobAction except errorAction: an error action has no error action of its own."""

    request: HttpRequest | None = None
    queue_message: StorageQueueMessage | None = Field(default=None, alias="queueMessage")
    service_bus_queue_message: ServiceBusQueueMessage | None = Field(default=None, alias="serviceBusQueueMessage")
    service_bus_topic_message: ServiceBusTopicMessage | None = Field(default=None, alias="serviceBusTopicMessage")
    type: JobActionType
    retry_policy: RetryPolicy | None = Field(default=None, alias="retryPolicy")


class JobAction(JobErrorAction):
    error_action: JobErrorAction | None = Field(default=None, alias="errorAction")
