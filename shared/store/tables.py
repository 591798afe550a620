"""The table contract every repository is written against, and the helpers they share.

`Table` is a protocol: the one seam between the repositories and Table Storage. Its implementations are
`AzureTable` (azure_table.py, the service through the SDK: what the app runs on) and `MemoryTable`
(memory/table.py, for tests and benchmarks); tests/store/contract runs the same tests against both, on Azurite.
Every table operation of the app goes through the methods below, and the ETag loop of every read-modify-write
through `read_modify_write`.

What every implementation keeps:
- An entity is a dict with `PartitionKey` and `RowKey`; a read hands its ETag beside the properties, under
  "etag" (a write leaves that key, and None values, out: the service stores no nulls).
- Values read back as the SDK reads them from the service: str, bool, float, UUID, bytes, an Int32 as int, an
  Int64 as `EntityProperty(value, EdmType.INT64)` (`int64`, `as_int`), a datetime as timezone-aware UTC.
- Every write gives the entity a new ETag; a write made under an ETag that no longer matches (or that expects
  no entity where one is) raises `ConcurrencyError`.
- Queries answer in PartitionKey, then RowKey order (ordinal), filtered with the OData subset the store sends.
- An entity-group transaction (the *_batch methods) holds at most `MAX_OPERATIONS` operations of one partition,
  each row once: it is done whole or not at all. One whose answer was lost is sent once more, and what the repeat
  meets of the first's writes is answered as written (AzureTable: transaction_repeat.py; memory loses no answers).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from azure.data.tables import EdmType, EntityProperty

from .transaction import MAX_OPERATIONS, TransactionRefused

Entity = dict[str, Any]
R = TypeVar("R")
T = TypeVar("T")


class ConcurrencyError(Exception):
    """The entity changed since it was read (ETag mismatch), or exists when it was expected not to."""


class BatchFailed(Exception):
    """An entity-group transaction was refused as a whole (e.g. one of its entities was missing)."""


class Table(Protocol):
    @property
    def name(self) -> str:
        """The table's name in its storage account."""
        ...

    def ensure_exists(self) -> None:
        """Create the table if it is missing. Until then every operation answers as the service does for a
        missing table: reads find nothing (`get` None, `delete` False), the rest raise ResourceNotFoundError."""
        ...

    def get(self, partition: str, row: str) -> Entity | None:
        """The entity with its "etag", or None."""
        ...

    def clock_skew(self) -> timedelta | None:
        """This machine's clock minus the service's, about (None when it cannot be told)."""
        ...

    def insert(self, entity: Entity) -> str:
        """Create; ConcurrencyError when it exists. Returns the new ETag."""
        ...

    def replace(self, entity: Entity, etag: str) -> str:
        """Replace only if unchanged since `etag` was read; ConcurrencyError when it changed or vanished.
        Returns the new ETag."""
        ...

    def upsert(self, entity: Entity) -> None:
        """Create or replace, whatever is there."""
        ...

    def delete(self, partition: str, row: str, etag: str | None = None) -> bool:
        """Delete (only if unchanged since `etag` when given: ConcurrencyError otherwise); True if this call
        removed the entity, False if it was not there."""
        ...

    def query(
        self,
        query_filter: str,
        parameters: dict[str, Any] | None = None,
        select: list[str] | None = None,
        page_size: int | None = None,
    ) -> Iterator[Entity]:
        """Every matching entity, in key order, read lazily `page_size` a request (the service's 1,000 when
        None); only the `select`ed properties (and "etag") when given. `@name` words of the filter are
        `parameters` (str, int, bool, datetime). The filter is checked, and a missing table raises, on the
        first read."""
        ...

    def count(self, query_filter: str, parameters: dict[str, Any] | None, limit: int) -> int:
        """How many entities match, counted no further than `limit` (reading keys only)."""
        ...

    def page(
        self, query_filter: str, parameters: dict[str, Any], size: int, continuation: Any = None
    ) -> tuple[list[Entity], Any]:
        """One page of at most `size` matching entities from `continuation` (None: the first), and the token of
        the next page: a dict of str (JSON-safe), None when nothing matching follows."""
        ...

    def upsert_batch(self, entities: list[Entity]) -> None:
        """Upsert (replace) 1 to 100 entities of one partition in one entity-group transaction. A refused
        transaction raises `TransactionRefused` (the operation's index and status); entities of two partitions
        ValueError, before anything is sent."""
        ...

    def insert_batch(self, entities: list[Entity], attempts: int = 3) -> list[str | None]:
        """Create up to 100 entities of one partition in one entity-group transaction: the ETag of each, or None
        for one that exists (or was left unwritten after `attempts` transactions: see `each_once`)."""
        ...

    def replace_batch(self, entities: list[tuple[Entity, str]], attempts: int = 2) -> list[str | None]:
        """Replace up to 100 entities of one partition, each only if unchanged since its ETag, in one entity-group
        transaction: the new ETag of each, or None for one not written (changed, vanished, or left unwritten
        after `attempts` transactions: see `each_once`)."""
        ...

    def delete_batch(self, partition: str, rows: list[str]) -> None:
        """Delete 1 to 100 rows of one partition in one entity-group transaction; BatchFailed when the service
        refused one of them (missing, or named twice): then nothing was deleted."""
        ...

    def delete_partition(self, partition: str) -> None:
        """Delete every row of the partition, 100 a transaction."""
        ...


def each_once(count: int, submit: Callable[[list[int]], list[str | None]], attempts: int) -> list[str | None]:
    """Operations 0..count-1 in one transaction (`submit` sends those of the indexes given, in order, and
    answers their ETags); one the service refuses (exists, changed, vanished: 409, 412, 404) is left out and
    the rest sent again, `attempts` transactions in all. The new ETags; None for what was not done (for its
    writer's own read-modify-write), or what `submit` answered None (a row found after a lost answer not to hold
    what was written: AzureTable, transaction_repeat.py). Any other refusal raises."""
    results: list[str | None] = [None] * count
    pending = list(range(count))
    for _ in range(attempts if count else 0):
        try:
            answers = submit(pending)
        except TransactionRefused as exc:
            if exc.status_code not in (404, 409, 412) or not 0 <= exc.index < len(pending):
                raise
            del pending[exc.index]  # left to its writer's own operation
            if not pending:
                break
            continue
        for i, answer in zip(pending, answers, strict=True):
            results[i] = None if answer is None else str(answer)  # None: a row found not to hold what was written
        break
    return results


def read_modify_write(
    read: Callable[[], R | None],
    change: Callable[[R], R | None],
    write: Callable[[R, R], R],
    *,
    attempts: int,
    current: R | None = None,
    pause: Callable[[int], None] | None = None,
) -> R | None:
    """The one ETag read-modify-write loop of the app: read (or start from `current`), decide, write under the
    ETag read; when somebody else wrote in between, read again and decide again.

    - Retries on `ConcurrencyError` only (the row changed or vanished since it was read, or exists where the
      write expected none): anything else `read`, `change` or `write` raise goes to the caller at once.
    - `attempts` writes at most (each use states its own budget: a herd racing for one row needs more); after
      the last one lost, ConcurrencyError, with no read more.
    - `pause(attempt)` runs before each re-read (none: re-read at once); `backoff(step)` is the jittered one,
      which spreads racing writers so that each round lets one of them through instead of none.
    - `change` is the caller's decision (a rule of jobstate, composed by the caller: the store decides nothing
      here). It returns the record to write, or None when nothing is to be written (then the current record is
      returned); it may raise to refuse. `write(updated, current)` writes under the ETag `updated` carries (or
      `current`'s) and returns what was written.

    Returns what was written, the unchanged current record, or None when `read` finds none (the record is gone).
    Round trips: a read (none when `current` is given), then a write, then a read and a write per lost race.
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
            if attempt + 1 == attempts:
                break  # no read whose answer nobody would use
            if pause is not None:
                pause(attempt)
            record = read()
    raise ConcurrencyError(f"the entity kept changing ({attempts} attempts)")


def backoff(step: float) -> Callable[[int], None]:
    """A `pause` for `read_modify_write`: a random 0 to `step` x (attempt + 1) seconds, at most 10 steps (a few
    milliseconds, more after each lost race): writers racing for one row spread instead of colliding again."""

    def pause(attempt: int) -> None:
        # Real time whatever the runtime's clock: it spreads writers that race in real time (as their round trips
        # do), and on a manual clock a lost race would hang until a test moved time. No timing of the product.
        time.sleep(random.uniform(0, step * min(attempt + 1, 10)))

    return pause


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


# RowKeys named in one query's filter: Azure Table Storage takes at most 15 comparisons in a filter (its documented
# limit), the partition's and 14 rows'.
ROWS_PER_QUERY = 14


def rows_of(table: Table, partition: str, rows: Iterable[str]) -> dict[str, Entity]:
    """The rows named of one partition that are there, by RowKey: ROWS_PER_QUERY a query (a filter naming them),
    not a read each."""
    found: dict[str, Entity] = {}
    for some in chunks(sorted(set(rows)), ROWS_PER_QUERY):
        names = {f"r{n}": row for n, row in enumerate(some)}
        # Spaces around the parentheses: the SDK finds its @parameters by splitting the filter at spaces.
        query = "PartitionKey eq @pk and ( " + " or ".join(f"RowKey eq @{name}" for name in names) + " )"
        found.update((str(e["RowKey"]), e) for e in table.query(query, {"pk": partition, **names}))
    return found


def int64(value: int) -> EntityProperty:
    """Table Storage infers Int32 for Python ints; larger counters must say Int64 explicitly."""
    return EntityProperty(value, EdmType.INT64)


def as_int(value: Any) -> int:
    """Int64 properties come back wrapped in EntityProperty; Int32 ones as plain ints."""
    if isinstance(value, EntityProperty):
        return int(value.value)
    return int(value or 0)


def count_rows(table: Table, query_filter: str, parameters: dict[str, Any] | None, limit: int) -> int:
    """`Table.count` over any table: its matching rows, read by key only, counted no further than `limit`."""
    total = 0
    for _ in table.query(query_filter, parameters, select=["RowKey"], page_size=min(limit, 1000)):
        total += 1
        if total >= limit:
            break
    return total


def delete_partition_rows(table: Table, partition: str) -> None:
    """`Table.delete_partition` over any table: its rows' keys read, then deleted 100 to a transaction."""
    rows = [e["RowKey"] for e in table.query("PartitionKey eq @pk", {"pk": partition}, select=["RowKey"])]
    for batch in chunks(rows, MAX_OPERATIONS):
        table.delete_batch(partition, batch)
