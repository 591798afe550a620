"""Bulk inserts for benchmarks: one entity-group transaction per 100 entities of a partition.

Written through `shared/store/transaction.py`, the app's own envelope: the Tables SDK builds and parses a
transaction's body with the `email` package, about 50 ms of CPU per 100 entities, and loading a million jobs
through it would take half an hour on two cores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from azure.core.exceptions import HttpResponseError, ServiceResponseError
from azure.data.tables import TableClient

from shared.store.transaction import submit


def insert_batch(client: TableClient, entities: list[Mapping[str, Any]]) -> None:
    """Insert up to 100 entities of one partition in one transaction; raises if any part failed."""
    operations = [("create", {k: v for k, v in entity.items() if v is not None}) for entity in entities]
    for attempt in range(3):
        try:
            submit(client, operations)
            return
        except ServiceResponseError:
            # A kept-alive connection Azurite closed while idle (the SDK does not retry a POST).
            if attempt == 2:
                raise
        except HttpResponseError as error:
            # A transaction is all or nothing: after a lost answer, "already exists" means it was applied.
            if attempt > 0 and error.status_code == 409:
                return
            raise
