"""One contract, two backends: every test of this folder runs against Azurite (the app's own `AzureStorage`: an
`AzureTable` and a Base64 `QueueClient`, as Store.from_settings builds them) and against `MemoryStorage`.

`backend.advance(seconds)` moves each backend's time: it sleeps on Azurite (the service keeps its own clock) and
moves the ManualClock the memory store reads. `backend.now()` is that time. Every test gets tables and queues of
names of its own (Azurite's tables live for the session)."""

from __future__ import annotations

import pytest

from tests.store.contract.backends import Backend, in_memory, on_azurite


@pytest.fixture(params=["azurite", "memory"])
def backend(request: pytest.FixtureRequest) -> Backend:
    # Azurite only when asked for: `-k memory` runs without it.
    return on_azurite(request.getfixturevalue("azurite")) if request.param == "azurite" else in_memory()
