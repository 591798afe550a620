"""App settings: connection-string (Azurite) and identity-based (cloud) storage configuration."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.settings import ConfigurationError, Settings, StorageSettings
from shared.settings.storage import DEVELOPMENT_STORAGE


def test_connection_string_mode() -> None:
    text = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net"
    storage = StorageSettings.from_environment({"AzureWebJobsStorage": text})
    assert storage.connection_string is not None and not storage.uses_identity
    assert storage.account_name == "acct"


def test_development_storage_means_azurite_defaults() -> None:
    storage = StorageSettings.from_environment({"AzureWebJobsStorage": "UseDevelopmentStorage=true"})
    assert storage.connection_string == DEVELOPMENT_STORAGE
    assert storage.account_name == "devstoreaccount1"


def test_identity_mode_with_service_uris() -> None:
    env = {
        "AzureWebJobsStorage__credential": "managedidentity",
        "AzureWebJobsStorage__clientId": "00000000-0000-0000-0000-000000000001",
        "AzureWebJobsStorage__blobServiceUri": "https://acct.blob.core.windows.net",
        "AzureWebJobsStorage__queueServiceUri": "https://acct.queue.core.windows.net",
        "AzureWebJobsStorage__tableServiceUri": "https://acct.table.core.windows.net",
    }
    storage = StorageSettings.from_environment(env)
    assert storage.uses_identity
    assert storage.credential == "managedidentity"
    assert storage.client_id == "00000000-0000-0000-0000-000000000001"
    assert storage.table_service_uri == "https://acct.table.core.windows.net"
    assert storage.queue_service_uri == "https://acct.queue.core.windows.net"
    assert storage.account_name == "acct"


def test_identity_mode_with_account_name_only() -> None:
    storage = StorageSettings.from_environment({"AzureWebJobsStorage__accountName": "acct"})
    assert storage.table_service_uri == "https://acct.table.core.windows.net"
    assert storage.queue_service_uri == "https://acct.queue.core.windows.net"
    assert storage.credential is None


def test_identity_clients_build_without_keys() -> None:
    from shared.store.clients import queue_service, table_service

    storage = StorageSettings.from_environment(
        {
            "AzureWebJobsStorage__credential": "managedidentity",
            "AzureWebJobsStorage__clientId": "00000000-0000-0000-0000-000000000001",
            "AzureWebJobsStorage__accountName": "acct",
        }
    )
    assert table_service(storage).url.startswith("https://acct.table.core.windows.net")
    assert queue_service(storage).url.startswith("https://acct.queue.core.windows.net")


def test_missing_storage_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="AzureWebJobsStorage"):
        StorageSettings.from_environment({})


def test_scheduler_settings() -> None:
    settings = Settings.from_environment(
        {
            "AzureWebJobsStorage": "UseDevelopmentStorage=true",
            "REGION_NAME": "West Europe",
            "SCHEDULER_PRIVATE_TARGETS": "loopback",
            "SCHEDULER_QUEUE_ENDPOINT": "http://127.0.0.1:10001/{account}",
        }
    )
    assert settings.region == "West Europe"
    assert settings.private_targets.loopback
    assert settings.queue_endpoint_template == "http://127.0.0.1:10001/{account}"
    assert not Settings.from_environment({"AzureWebJobsStorage": "UseDevelopmentStorage=true"}).private_targets.loopback


def test_the_dispatch_spread_is_whole_seconds_up_to_thirty() -> None:
    env = {"AzureWebJobsStorage": "UseDevelopmentStorage=true"}
    assert Settings.from_environment(env).dispatch_spread == timedelta(seconds=30)
    assert Settings.from_environment(env | {"SCHEDULER_DISPATCH_SPREAD_SECONDS": "0"}).dispatch_spread == timedelta(0)
    for wrong in ("31", "-1", "2.5", "soon"):
        with pytest.raises(ConfigurationError, match="SCHEDULER_DISPATCH_SPREAD_SECONDS"):
            Settings.from_environment(env | {"SCHEDULER_DISPATCH_SPREAD_SECONDS": wrong})
