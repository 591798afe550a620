"""Build Table and Queue service clients from the storage settings (connection string or identity).

Every client gets the scheduler's retry policy, set through each SDK's supported options: Tables take
azure-core's retry keywords (`retry_total`, `retry_backoff_factor`, `retry_backoff_max`), Queues take a
storage `retry_policy` object (they ignore `retry_backoff_factor`). The SDK defaults (15 s first backoff for
queues, up to 2 minutes for tables) suit bulk transfers, not a scheduler: after a blip an occurrence in
flight would wait out the backoff although storage is back, and everything queued behind it waits too.
Here the first retry is immediate or a fraction of a second, and one call gives up within a few seconds;
the callers' own redelivery (the queue trigger) covers longer outages without holding a worker thread.
"""

from __future__ import annotations

from typing import Any

from azure.core.pipeline.transport import RequestsTransport
from azure.data.tables import TableServiceClient
from azure.storage.queue import LinearRetry, QueueServiceClient

from ..settings import StorageSettings
from .entity_datetimes import install as read_datetimes_fast
from .transport import PooledTransport

# A storage round trip takes milliseconds; a connect that has not happened within this is not coming.
CONNECT_TIMEOUT = 3.0
# Longer than any single-entity or one-page operation takes, short enough that a dropped answer is
# noticed (and the call retried) in seconds rather than the SDK's default minute.
READ_TIMEOUT = 10.0
RETRIES = 4


def _credential(settings: StorageSettings) -> Any:
    # Imported lazily: azure-identity is only needed in the cloud, and its import is slow.
    from azure.identity import DefaultAzureCredential, ManagedIdentityCredential

    if (settings.credential or "").lower() == "managedidentity":
        if settings.client_id:
            return ManagedIdentityCredential(client_id=settings.client_id)
        return ManagedIdentityCredential()
    return DefaultAzureCredential(managed_identity_client_id=settings.client_id)


def _transport() -> RequestsTransport:
    # requests re-reads the proxy environment on every call unless told not to: about a tenth of the
    # CPU of a storage round trip. Our storage is reached directly, never through an environment proxy.
    # The timeouts live on the transport: a client's own timeout keywords only reach a transport it builds.
    return PooledTransport(use_env_settings=False, connection_timeout=CONNECT_TIMEOUT, read_timeout=READ_TIMEOUT)


def table_options() -> dict[str, Any]:
    """Retries at 0, 0.4, 0.8, 1.6 s (exponential, capped at 2 s): about 3 s of waiting at most per call."""
    return {"retry_total": RETRIES, "retry_backoff_factor": 0.2, "retry_backoff_max": 2}


def queue_options() -> dict[str, Any]:
    """Retries every 0.5 s (+-0.25 s jitter), four times: about 2 s of waiting at most per call."""
    # The SDK annotates these seconds as int; it computes with floats.
    policy = LinearRetry(backoff=0.5, random_jitter_range=0.25, retry_total=RETRIES)  # type: ignore[arg-type]
    return {"retry_policy": policy}


def table_service(settings: StorageSettings) -> TableServiceClient:
    read_datetimes_fast()
    if settings.connection_string:
        return TableServiceClient.from_connection_string(
            settings.connection_string, transport=_transport(), **table_options()
        )
    assert settings.table_service_uri is not None
    return TableServiceClient(
        endpoint=settings.table_service_uri,
        credential=_credential(settings),
        transport=_transport(),
        **table_options(),
    )


def queue_service(settings: StorageSettings) -> QueueServiceClient:
    if settings.connection_string:
        return QueueServiceClient.from_connection_string(
            settings.connection_string, transport=_transport(), **queue_options()
        )
    assert settings.queue_service_uri is not None
    return QueueServiceClient(
        account_url=settings.queue_service_uri,
        credential=_credential(settings),
        transport=_transport(),
        **queue_options(),
    )
