"""`MemoryStorage`: the storage seam (shared/store/storage.py) in memory: every storage account's tables and the
primary's queues, made on first ask and the same object on every later one, so stores built over one
`MemoryStorage` (two hosts, a rebalance) share them as they would share an account. Everything follows `clock`:
give the runtime the same one."""

from __future__ import annotations

import threading

from ...clock import Clock
from ..storage import Storage
from .queue import MemoryQueue
from .table import MemoryTable


class MemoryStorage(Storage):
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._tables: dict[tuple[int, str], MemoryTable] = {}
        self._queues: dict[str, MemoryQueue] = {}

    def table(self, account: int, name: str) -> MemoryTable:
        # Table names are case-insensitive in the service.
        with self._lock:
            return self._tables.setdefault((account, name.lower()), MemoryTable(name, self.clock))

    def queue(self, name: str) -> MemoryQueue:
        with self._lock:
            return self._queues.setdefault(name, MemoryQueue(name, self.clock))
