"""`MemoryTable`: the `Table` contract (shared/store/tables.py) in memory, as `AzureTable` keeps it on the service.

One lock per table: every operation, and every page of a query, is atomic; a query reads page by page as the
service does, so writes between its pages show in the pages after. Writes are stamped from the clock given
(Timestamp, and an ETag made of it as the service makes it), strictly increasing within the table, so every
write has a new ETag even when the clock stands still. Until `ensure_exists` the table answers as a missing one.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from ...clock import Clock
from ..stored_values import Invalid, stored
from ..tables import BatchFailed, ConcurrencyError, Entity, Table, count_rows, delete_partition_rows, each_once
from ..transaction import TransactionRefused
from .errors import bad_request, table_not_found
from .odata import Filter, compile_filter, substitute
from .rows import Key, Row, Rows
from .transaction import Operation, Refused, apply

MAX_PAGE = 1000  # the service's largest page
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]{2,62}")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class MemoryTable(Table):
    def __init__(self, name: str, clock: Clock) -> None:
        self._name = name
        self._clock = clock
        self._lock = threading.RLock()
        self._rows: Rows | None = None  # None: not created
        self._last = _EPOCH

    @property
    def name(self) -> str:
        return self._name

    def ensure_exists(self) -> None:
        if not _NAME.fullmatch(self._name):
            raise bad_request("InvalidResourceName", f"{self._name!r} is not a table name (3-63 letters and digits).")
        with self._lock:
            if self._rows is None:
                self._rows = Rows()

    def get(self, partition: str, row: str) -> Entity | None:
        with self._lock:
            found = self._rows.get((partition, row)) if self._rows is not None else None
            return _answer(found, None) if found is not None else None

    def clock_skew(self) -> timedelta | None:
        return timedelta(0)  # the store keeps the time of the clock the app reads

    def insert(self, entity: Entity) -> str:
        try:
            return str(self._write([_operation("create", entity)])[0])
        except Refused as refusal:
            if refusal.status == 409:
                raise ConcurrencyError("entity already exists") from None
            raise refusal.error() from None

    def replace(self, entity: Entity, etag: str) -> str:
        try:
            return str(self._write([_operation("replace", entity, etag)])[0])
        except Refused as refusal:
            if refusal.status in (404, 412):  # vanished (or no table), or changed
                raise ConcurrencyError("entity changed or vanished") from None
            raise refusal.error() from None

    def upsert(self, entity: Entity) -> None:
        try:
            self._write([_operation("upsert", entity)])
        except Refused as refusal:
            raise refusal.error() from None

    def delete(self, partition: str, row: str, etag: str | None = None) -> bool:
        try:
            self._write([Operation("delete", (partition, row), None, etag or None)])
        except Refused as refusal:
            if refusal.status == 412:
                raise ConcurrencyError("entity changed") from None
            if refusal.status == 404:
                return False
            raise refusal.error() from None
        return True

    def query(
        self,
        query_filter: str,
        parameters: dict[str, Any] | None = None,
        select: list[str] | None = None,
        page_size: int | None = None,
    ) -> Iterator[Entity]:
        found = compile_filter(substitute(query_filter, parameters))
        start: Key | None = None
        while True:
            items, start = self._page(found, select, min(page_size or MAX_PAGE, MAX_PAGE), start)
            yield from items
            if start is None:
                return

    def count(self, query_filter: str, parameters: dict[str, Any] | None, limit: int) -> int:
        return count_rows(self, query_filter, parameters, limit)

    def page(
        self, query_filter: str, parameters: dict[str, Any], size: int, continuation: Any = None
    ) -> tuple[list[Entity], Any]:
        found = compile_filter(substitute(query_filter, parameters))
        items, following = self._page(found, None, min(size, MAX_PAGE), _start_of(continuation))
        return items, _token(following) if following is not None else None

    def upsert_batch(self, entities: list[Entity]) -> None:
        self._transaction([_operation("upsert", e) for e in entities])

    def insert_batch(self, entities: list[Entity], attempts: int = 3) -> list[str | None]:
        operations = [_operation("create", e) for e in entities]
        with self._lock:  # the attempts one after the other, nothing written in between
            return each_once(
                len(operations), lambda pending: self._transaction([operations[i] for i in pending]), attempts
            )

    def replace_batch(self, entities: list[tuple[Entity, str]], attempts: int = 2) -> list[str | None]:
        operations = [_operation("replace", entity, etag) for entity, etag in entities]
        with self._lock:
            return each_once(
                len(operations), lambda pending: self._transaction([operations[i] for i in pending]), attempts
            )

    def delete_batch(self, partition: str, rows: list[str]) -> None:
        try:
            self._transaction([Operation("delete", (partition, row), None) for row in rows])
        except TransactionRefused as exc:
            raise BatchFailed(str(exc)) from exc

    def delete_partition(self, partition: str) -> None:
        delete_partition_rows(self, partition)

    def _write(self, operations: list[Operation]) -> list[str | None]:
        with self._lock:
            return apply(self._rows, operations, self._stamp, batch=False)

    def _transaction(self, operations: list[Operation]) -> list[str | None]:
        if len({o.key[0] for o in operations}) > 1:  # the SDK's own check, before anything is sent
            raise ValueError("Partition Keys in the batch must all be the same.")
        try:
            with self._lock:
                return apply(self._rows, operations, self._stamp, batch=True)
        except Refused as refusal:
            raise refusal.in_transaction() from None

    def _stamp(self) -> tuple[datetime, str]:
        # As the service's: the write's time, and the ETag made of it (100 ns digits; ours end in 0).
        self._last = max(self._clock.now().astimezone(UTC), self._last + timedelta(microseconds=1))
        written = self._last.strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"
        return self._last, f"W/\"datetime'{quote(written)}'\""

    def _page(
        self, found: Filter, select: list[str] | None, size: int, start: Key | None
    ) -> tuple[list[Entity], Key | None]:
        """Up to `size` matches from `start` on, and the key of the match after them (None: there is none)."""
        items: list[Entity] = []
        with self._lock:
            if self._rows is None:
                raise table_not_found()
            for key, row in self._rows.scan(start, found.partition):
                if not found.matches(row.values):
                    continue
                if len(items) == size:
                    return items, key
                items.append(_answer(row, select))
        return items, None


def _operation(kind: Any, entity: Entity, etag: str | None = None) -> Operation:
    try:
        values: dict[str, Any] | Invalid = stored(entity)
    except Invalid as invalid:
        values = invalid
    return Operation(kind, (str(entity.get("PartitionKey")), str(entity.get("RowKey"))), values, etag)


def _answer(row: Row, select: list[str] | None) -> Entity:
    """What a read answers: the values (only those selected, of those the entity has) and the ETag beside them;
    the SDK keeps Timestamp out of the entity."""
    values = row.values
    names = values.keys() if select is None else [name for name in dict.fromkeys(select) if name in values]
    return {name: values[name] for name in names if name != "Timestamp"} | {"etag": row.etag}


def _token(key: Key) -> dict[str, str]:
    # Azurite's form: the next entity's keys, Base64. A dict of str, as the SDK's tokens are.
    return {"PartitionKey": _b64(key[0]), "RowKey": _b64(key[1])}


def _start_of(continuation: Any) -> Key | None:
    if continuation is None:
        return None
    try:
        return (_unb64(continuation["PartitionKey"]), _unb64(continuation["RowKey"]))
    except (TypeError, KeyError, ValueError):
        raise ValueError("Invalid continuation token format.") from None


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _unb64(text: str) -> str:
    return base64.b64decode(text.encode(), validate=True).decode()
