"""When storage cannot be reached, the API answers 503 ServiceUnavailable with Retry-After, promptly, and
is back as soon as storage is (the storage link goes through the test suite's fault proxy)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator

import pytest

from devhost.azurite import Azurite
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from tests.support.fault_proxy import StorageFaults
from tests.support.scheduler_client import call, make_collection


@pytest.fixture
def faults(azurite: Azurite) -> Iterator[StorageFaults]:
    proxied = StorageFaults(azurite.connection_string)
    yield proxied
    proxied.close()


@pytest.mark.parametrize("mode", ["down", "reset", "drop"])
def test_storage_outage_is_503_with_retry_after(settings: Settings, faults: StorageFaults, mode: str) -> None:
    rt = Runtime.create(
        dataclasses.replace(settings, storage=StorageSettings(connection_string=faults.connection_string))
    )
    make_collection(rt)
    faults.set_mode(mode)
    began = time.monotonic()
    response = call(rt, "JobCollections_Get", "GET")
    took = time.monotonic() - began
    assert response.status == 503, response.body
    assert response.body["error"]["code"] == "ServiceUnavailable"
    assert int(response.headers["Retry-After"]) > 0
    assert took < 10, took  # bounded by the storage clients' retry policy, not the SDK's minutes
    faults.set_mode("pass")
    assert call(rt, "JobCollections_Get", "GET").status == 200
