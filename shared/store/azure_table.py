"""`AzureTable`: the `Table` contract (tables.py) over Table Storage, through an azure TableClient.

The client is private, so every table operation of the app goes through the methods below. Queries go through
entity_query.py's `query_page` (the SDK's request, its answer read by hand). Entity-group
transactions go through transaction.py's `submit` (the envelope written by hand), so a refused one raises its
`TransactionRefused`; the SDK's own batch builder still refuses entities of two partitions (ValueError) before
anything is sent. Each batch call sends a transaction whose answer was lost once more, and tells the repeat's
"exists", "changed" or "missing" from a conflict by reading its rows back (transaction_repeat.py).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from datetime import timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from azure.core import MatchConditions
from azure.core.exceptions import ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import TableClient, UpdateMode

from .entity_query import query_page
from .tables import BatchFailed, ConcurrencyError, Entity, Table, count_rows, delete_partition_rows, each_once, rows_of
from .transaction import TransactionRefused
from .transaction_repeat import OnceMore


class AzureTable(Table):
    def __init__(self, client: TableClient) -> None:
        self._client = client

    @property
    def name(self) -> str:
        return str(self._client.table_name)

    def ensure_exists(self) -> None:
        with contextlib.suppress(ResourceExistsError):
            self._client.create_table()

    def get(self, partition: str, row: str) -> Entity | None:
        try:
            entity = self._client.get_entity(partition, row)
        except ResourceNotFoundError:
            return None
        found = dict(entity)
        found["etag"] = entity.metadata["etag"]
        return found

    def clock_skew(self) -> timedelta | None:
        """From the Date header of a cheap read (a missing row). The header has whole seconds, so the answer is
        good to about a second plus half the round trip; None when the service sent no usable Date."""
        dates: list[str] = []

        def hook(response: Any) -> None:
            dates.append(str(response.http_response.headers.get("Date") or ""))

        started = time.time()
        with contextlib.suppress(ResourceNotFoundError):
            self._client.get_entity("~clock", "~clock", raw_response_hook=hook)
        ended = time.time()
        try:
            served = parsedate_to_datetime(dates[-1]).timestamp() + 0.5  # somewhere in that second
        except (IndexError, TypeError, ValueError):
            return None
        return timedelta(seconds=round((started + ended) / 2 - served, 1))

    def insert(self, entity: Entity) -> str:
        try:
            return str(self._client.create_entity(_clean(entity))["etag"])
        except ResourceExistsError as exc:
            raise ConcurrencyError("entity already exists") from exc

    def replace(self, entity: Entity, etag: str) -> str:
        try:
            result = self._client.update_entity(
                _clean(entity), mode=UpdateMode.REPLACE, etag=etag, match_condition=MatchConditions.IfNotModified
            )
        except (ResourceModifiedError, ResourceNotFoundError) as exc:
            raise ConcurrencyError("entity changed or vanished") from exc
        return str(result["etag"])

    def upsert(self, entity: Entity) -> None:
        self._client.upsert_entity(_clean(entity), mode=UpdateMode.REPLACE)

    def delete(self, partition: str, row: str, etag: str | None = None) -> bool:
        """The SDK answers a 404 (no such entity, or no such table) as a success: the hooks (called on every try)
        tell them apart. A 404 after a retry counts as this call's removal: the first try may have removed the
        entity and lost its answer, and a removal counted twice is the rarer error (it takes a concurrent delete
        too) than one never counted."""
        tries: list[int] = []

        def sent(_: Any) -> None:
            tries.append(0)

        def answered(response: Any) -> None:
            tries[-1] = int(response.http_response.status_code)

        try:
            if etag:
                match = MatchConditions.IfNotModified
                self._client.delete_entity(
                    partition, row, etag=etag, match_condition=match, raw_request_hook=sent, raw_response_hook=answered
                )
            else:
                self._client.delete_entity(partition, row, raw_request_hook=sent, raw_response_hook=answered)
        except ResourceModifiedError as exc:
            raise ConcurrencyError("entity changed") from exc
        except ResourceNotFoundError:
            return False
        return not tries or tries[-1] != 404 or len(tries) > 1

    def query(
        self,
        query_filter: str,
        parameters: dict[str, Any] | None = None,
        select: list[str] | None = None,
        page_size: int | None = None,
    ) -> Iterator[Entity]:
        continuation = None
        while True:
            rows, continuation = query_page(self._client, query_filter, parameters, select, page_size, continuation)
            yield from rows
            if continuation is None:
                return

    def count(self, query_filter: str, parameters: dict[str, Any] | None, limit: int) -> int:
        return count_rows(self, query_filter, parameters, limit)

    def page(
        self, query_filter: str, parameters: dict[str, Any], size: int, continuation: Any = None
    ) -> tuple[list[Entity], Any]:
        return query_page(self._client, query_filter, parameters, None, size, continuation)

    def upsert_batch(self, entities: list[Entity]) -> None:
        self._once_more().submit([("upsert", _clean(e), {"mode": UpdateMode.REPLACE}) for e in entities])

    def insert_batch(self, entities: list[Entity], attempts: int = 3) -> list[str | None]:
        once_more = self._once_more()
        return each_once(
            len(entities),
            lambda pending: once_more.submit([("create", _clean(entities[i])) for i in pending]),
            attempts,
        )

    def replace_batch(self, entities: list[tuple[Entity, str]], attempts: int = 2) -> list[str | None]:
        """A transaction is all or nothing, so when entity `i` changed or vanished it is sent again without it
        (each try builds the whole body again, about 60 microseconds of CPU per entity, transaction.py)."""

        def operation(i: int) -> tuple[Any, ...]:
            entity, etag = entities[i]
            keywords = {"mode": UpdateMode.REPLACE, "etag": etag, "match_condition": MatchConditions.IfNotModified}
            return ("update", _clean(entity), keywords)

        once_more = self._once_more()
        return each_once(len(entities), lambda pending: once_more.submit([operation(i) for i in pending]), attempts)

    def delete_batch(self, partition: str, rows: list[str]) -> None:
        try:
            self._once_more().submit([("delete", {"PartitionKey": partition, "RowKey": row}) for row in rows])
        except TransactionRefused as exc:
            raise BatchFailed(str(exc)) from exc

    def delete_partition(self, partition: str) -> None:
        delete_partition_rows(self, partition)

    def _once_more(self) -> OnceMore:
        return OnceMore(self._client, self._rows)

    def _rows(self, partition: str, rows: list[str]) -> dict[str, Entity]:
        """The rows of the partition named, by RowKey (those found), ROWS_PER_QUERY a query."""
        return rows_of(self, partition, rows)


def _clean(entity: Entity) -> Entity:
    # Table Storage cannot store nulls, and our ETag travels beside the entity, not in it.
    return {k: v for k, v in entity.items() if v is not None and k != "etag"}
