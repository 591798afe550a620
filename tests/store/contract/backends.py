"""The two backends of the contract suite (conftest.py): Azurite through the app's own `AzureStorage`, and
`MemoryStorage` on a ManualClock."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from devhost.azurite import Azurite
from shared.settings import Settings, StorageSettings
from shared.store.memory import MemoryStorage
from shared.store.storage import AzureStorage, Storage
from shared.store.tables import Table
from tests.support.clock import ManualClock


@dataclass
class Backend:
    name: str
    storage: Storage
    advance: Callable[[float], None]
    now: Callable[[], datetime]

    def table(self, create: bool = True) -> Table:
        """A table of its own, created unless told not to."""
        table = self.storage.table(0, f"c{uuid.uuid4().hex[:16]}")
        if create:
            table.ensure_exists()
        return table

    def queue(self, create: bool = True) -> Any:
        """A queue of its own (the app's Base64 text queue), created unless told not to; Any: the tests also read
        it as they read the app's (receive_messages, peek_messages), beyond the app's `MessageQueue`."""
        queue = self.storage.queue(f"c-{uuid.uuid4().hex[:16]}")
        if create:
            queue.create_queue()
        return queue


def on_azurite(azurite: Azurite) -> Backend:
    settings = Settings(storage=StorageSettings(connection_string=azurite.connection_string))
    return Backend("azurite", AzureStorage(settings), time.sleep, lambda: datetime.now(UTC))


def in_memory() -> Backend:
    clock = ManualClock(datetime.now(UTC).replace(microsecond=0))

    def advance(seconds: float) -> None:
        clock.advance(timedelta(seconds=seconds))

    return Backend("memory", MemoryStorage(clock), advance, clock.now)


def only_memory(backend: Backend, why: str) -> None:
    """For a limit Azure enforces and Azurite does not: the memory store keeps Azure's."""
    if backend.name != "memory":
        pytest.skip(f"Azurite does not enforce it ({why}); Azure does, and so does the memory store")
