"""The storage seam: where the store's tables and queues come from.

`Store.from_settings(settings, storage)` asks a `Storage` for every table (by storage account, 0 the primary,
and full name) and queue (on the primary account, by name) it uses. `AzureStorage` (the default) builds them
from the settings' accounts, as the app runs; `MemoryStorage` (memory/storage.py) holds them in memory, on a
clock of its own, for tests and benchmarks. Both hand out the contracts of tables.py and queue_client.py.
"""

from __future__ import annotations

from typing import Protocol

from azure.data.tables import TableServiceClient
from azure.storage.queue import QueueServiceClient

from ..settings import Settings
from .azure_table import AzureTable
from .clients import queue_service, table_service
from .queue_client import MessageQueue
from .queues import base64_text
from .tables import Table


class Storage(Protocol):
    def table(self, account: int, name: str) -> Table:
        """The table `name` of storage account `account` (0: the primary, then SCHEDULER_STORAGE_ACCOUNTS')."""
        ...

    def queue(self, name: str) -> MessageQueue:
        """The queue `name` of the primary account, its messages Base64 text (host.json's messageEncoding)."""
        ...


class AzureStorage(Storage):
    """The settings' storage accounts, each a Table service client (and the primary's Queue service client)."""

    def __init__(self, settings: Settings) -> None:
        self._tables: list[TableServiceClient] = [
            table_service(account) for account in (settings.storage, *settings.data_accounts)
        ]
        self._queues: QueueServiceClient = queue_service(settings.storage)

    def table(self, account: int, name: str) -> Table:
        return AzureTable(self._tables[account].get_table_client(name))

    def queue(self, name: str) -> MessageQueue:
        return self._queues.get_queue_client(name, **base64_text())
