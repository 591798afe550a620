"""The executor's tests on the memory store and a ManualClock (shared/manual_clock.py): time moves only when a test
moves it (tests/support/manual_time.py), so a test of a window, a lease or a backstop waits for none of them in real
time. A module that needs another deployment (two hosts on one store, Azurite beside memory) overrides `rt`."""

from __future__ import annotations

import pytest

from shared.manual_clock import ManualClock
from shared.store.memory import MemoryStorage
from tests.support.manual_time import manual_clock, manual_runtime  # noqa: F401 (the fixtures `clock` and `rt`)


@pytest.fixture
def shared_storage(clock: ManualClock) -> MemoryStorage:
    """One deployment's tables and queues, for a test whose runtimes (several hosts, or instances beside the test's
    runtime) share them."""
    return MemoryStorage(clock)
