"""The dispatcher's in-process tests run on the memory store (shared/store/memory, held to Azurite's behaviour by
tests/store/contract): a tick, its fanned-out tasks and the due index are logic, whatever keeps the rows. The memory
store runs on the real clock as Azurite's queues do, so a test's hand-set `clock` still sees a delayed message turn
visible in real seconds. test_multi_host and test_crash_recovery start hosts of the real app, each on an Azurite of
its own, and take no `storage`."""

from __future__ import annotations

import pytest

from shared.store.memory import MemoryStorage
from shared.store.storage import Storage


@pytest.fixture
def storage(memory_storage: MemoryStorage) -> Storage | None:
    return memory_storage
