"""Build Table and Queue service clients from the storage settings (connection string or identity)."""

from __future__ import annotations

from typing import Any

from azure.core.pipeline.transport import RequestsTransport
from azure.data.tables import TableServiceClient
from azure.storage.queue import QueueServiceClient

from ..settings import StorageSettings


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
    return RequestsTransport(use_env_settings=False)


def table_service(settings: StorageSettings) -> TableServiceClient:
    if settings.connection_string:
        return TableServiceClient.from_connection_string(settings.connection_string, transport=_transport())
    assert settings.table_service_uri is not None
    return TableServiceClient(
        endpoint=settings.table_service_uri, credential=_credential(settings), transport=_transport()
    )


def queue_service(settings: StorageSettings) -> QueueServiceClient:
    if settings.connection_string:
        return QueueServiceClient.from_connection_string(settings.connection_string, transport=_transport())
    assert settings.queue_service_uri is not None
    return QueueServiceClient(
        account_url=settings.queue_service_uri, credential=_credential(settings), transport=_transport()
    )
