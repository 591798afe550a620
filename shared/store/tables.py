"""Thin, typed access to one table: the ETag rules and error mapping every repository shares.

`Table` is sealed: its SDK client is private, so every table operation of the app goes through the few
methods below (and the ETag loop of every read-modify-write through `read_modify_write`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from azure.core import MatchConditions
from azure.core.exceptions import ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import EdmType, EntityProperty, TableClient, UpdateMode

from .transaction import MAX_OPERATIONS, TransactionRefused, submit

Entity = dict[str, Any]
R = TypeVar("R")
T = TypeVar("T")


class ConcurrencyError(Exception):
    """The entity changed since it was read (ETag mismatch), or exists when it was expected not to."""


class BatchFailed(Exception):
    """An entity-group transaction was refused as a whole (e.g. one of its entities was missing)."""


class Table:
    def __init__(self, client: TableClient) -> None:
        self._client = client

    @property
    def name(self) -> str:
        return str(self._client.table_name)

    def ensure_exists(self) -> None:
        """Create the table if it is missing."""
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
        """This machine's clock minus the service's, from the Date header of a cheap read (a missing row).

        The header has whole seconds, so the answer is good to about a second plus half the round trip;
        None when the service sent no usable Date."""
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
        """Create; ConcurrencyError when it exists. Returns the new ETag."""
        try:
            return str(self._client.create_entity(_clean(entity))["etag"])
        except ResourceExistsError as exc:
            raise ConcurrencyError("entity already exists") from exc

    def replace(self, entity: Entity, etag: str) -> str:
        """Replace only if unchanged since `etag` was read; ConcurrencyError otherwise."""
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
        """Delete; True if this call removed the entity, False if it was not there."""
        try:
            if etag:
                self._client.delete_entity(partition, row, etag=etag, match_condition=MatchConditions.IfNotModified)
            else:
                self._client.delete_entity(partition, row)
        except ResourceModifiedError as exc:
            raise ConcurrencyError("entity changed") from exc
        except ResourceNotFoundError:
            return False
        return True

    def query(
        self,
        query_filter: str,
        parameters: dict[str, Any] | None = None,
        select: list[str] | None = None,
        page_size: int | None = None,
    ) -> Iterator[Entity]:
        """Every matching entity, read lazily `page_size` a request (the service's 1,000 when None)."""
        found = self._client.query_entities(
            query_filter, parameters=parameters, select=select, results_per_page=page_size
        )
        for entity in found:
            item = dict(entity)
            item["etag"] = entity.metadata.get("etag")
            yield item

    def count(self, query_filter: str, parameters: dict[str, Any] | None, limit: int) -> int:
        """How many entities match, counted no further than `limit` (reading keys only)."""
        total = 0
        for _ in self._client.query_entities(
            query_filter, parameters=parameters, select=["RowKey"], results_per_page=min(limit, 1000)
        ):
            total += 1
            if total >= limit:
                break
        return total

    def page(
        self, query_filter: str, parameters: dict[str, Any], size: int, continuation: Any = None
    ) -> tuple[list[Entity], Any]:
        """One server page of at most `size` entities, and the continuation token for the next (None at the end)."""
        pages = self._client.query_entities(query_filter, parameters=parameters, results_per_page=size).by_page(
            continuation_token=continuation
        )
        try:
            items = [dict(e) | {"etag": e.metadata.get("etag")} for e in next(pages)]
        except StopIteration:
            return [], None
        # by_page() is typed as a plain iterator; it returns an azure.core PageIterator, which has the token.
        return items, getattr(pages, "continuation_token", None)

    def upsert_batch(self, entities: list[Entity]) -> None:
        """Upsert (replace) up to 100 entities of one partition in one entity-group transaction."""
        submit(self._client, [("upsert", _clean(e), {"mode": UpdateMode.REPLACE}) for e in entities])

    def insert_batch(self, entities: list[Entity], attempts: int = 3) -> list[str | None]:
        """Create up to 100 entities of one partition in one entity-group transaction: the ETag of each, or None
        for one that exists (or was left unwritten after `attempts` transactions: see `replace_batch`)."""
        return self._each_once(len(entities), lambda i: ("create", _clean(entities[i])), attempts)

    def replace_batch(self, entities: list[tuple[Entity, str]], attempts: int = 2) -> list[str | None]:
        """Replace up to 100 entities of one partition, each only if unchanged since its ETag, in one entity-group
        transaction: the new ETag of each, or None for one not written. A transaction is all or nothing, so when
        entity `i` changed or vanished it is sent again without it, `attempts` times in all; what is still
        unwritten then is None too (for its writer's own read-modify-write: each try builds the whole body again,
        about 60 microseconds of CPU per entity, transaction.py)."""
        return self._each_once(
            len(entities),
            lambda i: (
                "update",
                _clean(entities[i][0]),
                {"mode": UpdateMode.REPLACE, "etag": entities[i][1], "match_condition": MatchConditions.IfNotModified},
            ),
            attempts,
        )

    def _each_once(self, count: int, operation: Callable[[int], tuple[Any, ...]], attempts: int) -> list[str | None]:
        """Operations 0..count-1 in one transaction; one the service refuses (exists, changed, vanished) is left
        out and the rest sent again, `attempts` transactions in all. The new ETags; None for what was not done."""
        results: list[str | None] = [None] * count
        pending = list(range(count))
        for _ in range(attempts if count else 0):
            try:
                answers = submit(self._client, [operation(i) for i in pending])
            except TransactionRefused as exc:
                if exc.status_code not in (404, 409, 412) or not 0 <= exc.index < len(pending):
                    raise
                del pending[exc.index]  # left to its writer's own operation
                if not pending:
                    break
                continue
            for i, answer in zip(pending, answers, strict=True):
                results[i] = str(answer)
            break
        return results

    def delete_batch(self, partition: str, rows: list[str]) -> None:
        """Delete up to 100 rows of one partition in one entity-group transaction; BatchFailed when one of them
        is missing (then nothing was deleted)."""
        try:
            submit(self._client, [("delete", {"PartitionKey": partition, "RowKey": row}) for row in rows])
        except TransactionRefused as exc:
            raise BatchFailed(str(exc)) from exc

    def delete_partition(self, partition: str) -> None:
        rows = [e["RowKey"] for e in self.query("PartitionKey eq @pk", {"pk": partition}, select=["RowKey"])]
        for batch in chunks(rows, MAX_OPERATIONS):
            self.delete_batch(partition, batch)


def read_modify_write(
    read: Callable[[], R | None],
    change: Callable[[R], R | None],
    write: Callable[[R, R], R],
    *,
    attempts: int,
    current: R | None = None,
    pause: Callable[[int], None] | None = None,
) -> R | None:
    """The one ETag read-modify-write loop: read (or start from `current`), decide, write under the ETag read;
    when somebody else wrote in between (ConcurrencyError), read again and decide again.

    `change` returns the record to write, or None when nothing is to be written (then the current record is
    returned); it may raise to refuse. `write(updated, current)` passes the ETag `updated` carries. Returns
    what was written, the unchanged current record, or None when the record is gone. After `attempts` lost
    races, ConcurrencyError; `pause(attempt)` runs before each re-read (jitter spreads racing writers).
    """
    record = current if current is not None else read()
    for attempt in range(attempts):
        if record is None:
            return None
        updated = change(record)
        if updated is None:
            return record
        try:
            return write(updated, record)
        except ConcurrencyError:
            if pause is not None:
                pause(attempt)
            record = read()
    raise ConcurrencyError(f"the entity kept changing ({attempts} attempts)")


def _clean(entity: Entity) -> Entity:
    # Table Storage cannot store nulls, and our ETag travels beside the entity, not in it.
    return {k: v for k, v in entity.items() if v is not None and k != "etag"}


def as_datetime(value: Any) -> datetime | None:
    return value if isinstance(value, datetime) else None


def chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def grouped(items: Iterable[T], key: Callable[[T], Hashable], size: int | None = None) -> list[list[T]]:
    """`items` with equal `key` together, in first-seen order, each group cut in `chunks` of `size` (a
    transaction's share: one partition, at most so many) when given."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return [chunk for group in groups.values() for chunk in (chunks(group, size) if size else [group])]


def int64(value: int) -> EntityProperty:
    """Table Storage infers Int32 for Python ints; larger counters must say Int64 explicitly."""
    return EntityProperty(value, EdmType.INT64)


def as_int(value: Any) -> int:
    """Int64 properties come back wrapped in EntityProperty; Int32 ones as plain ints."""
    if isinstance(value, EntityProperty):
        return int(value.value)
    return int(value or 0)
