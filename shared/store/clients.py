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

import requests
from azure.core.exceptions import ServiceResponseError
from azure.core.pipeline.transport import RequestsTransport
from azure.data.tables import TableServiceClient
from azure.storage.queue import LinearRetry, QueueServiceClient
from requests.adapters import HTTPAdapter

from ..settings import StorageSettings
from .entity_datetimes import install as read_datetimes_fast

# A storage round trip takes milliseconds; a connect that has not happened within this is not coming.
CONNECT_TIMEOUT = 3.0
# Longer than any single-entity or one-page operation takes, short enough that a dropped answer is
# noticed (and the call retried) in seconds rather than the SDK's default minute.
READ_TIMEOUT = 10.0
RETRIES = 4
# Connections kept per storage endpoint: as many as the threads that call it side by side (the executor's
# 64, the recorder's, the renewals'). requests keeps 10, and a herd then opens and discards a connection
# per call beyond them ("Connection pool is full"), each a TCP handshake and the CPU to make it.
POOL_SIZE = 128


def _credential(settings: StorageSettings) -> Any:
    # Imported lazily: azure-identity is only needed in the cloud, and its import is slow.
    from azure.identity import DefaultAzureCredential, ManagedIdentityCredential

    if (settings.credential or "").lower() == "managedidentity":
        if settings.client_id:
            return ManagedIdentityCredential(client_id=settings.client_id)
        return ManagedIdentityCredential()
    return DefaultAzureCredential(managed_identity_client_id=settings.client_id)


class PooledTransport(RequestsTransport):
    """azure-core's requests transport keeping `connections` connections per endpoint (the local host's queue
    listeners use it too). The transport takes no pool size; `_init_session` is where it mounts its adapters
    on the session it makes, once."""

    def __init__(self, connections: int = POOL_SIZE, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._connections = connections

    def _init_session(self, session: requests.Session) -> None:
        super()._init_session(session)
        for adapter in session.adapters.values():
            if isinstance(adapter, HTTPAdapter):
                adapter.init_poolmanager(self._connections, self._connections)

    def send(self, request: Any, **kwargs: Any) -> Any:
        """The answer, or ServiceResponseError (retried as a lost answer) when the connection closed inside its
        headers: http.client takes the close for their end, so such an answer reads as a whole one with no
        length and an empty body, which the SDKs' deserializers fail on with AttributeError or TypeError."""
        response = super().send(request, **kwargs)
        if _cut_in_its_headers(request.method, response.status_code, response.headers):
            response.internal_response.close()  # requests' own response, under either kind azure-core wraps
            raise ServiceResponseError(message="storage's answer ended inside its headers")
        return response


def _cut_in_its_headers(method: str, status: int, headers: Any) -> bool:
    # Storage frames every answer that has a body by its length or in chunks (never by closing the connection);
    # a header cut part-way keeps what came of its value ("Transfer-Encoding: chu").
    if method.upper() == "HEAD" or status < 200 or status in (204, 304):
        return False
    length = str(headers.get("Content-Length") or "")
    return not length.isdigit() and not str(headers.get("Transfer-Encoding") or "").lower().endswith("chunked")


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
