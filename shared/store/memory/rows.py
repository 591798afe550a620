"""The rows of one table in the service's order: by PartitionKey, then RowKey, each compared by code point.

Not thread-safe on its own: the table holding it takes its lock around every call.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Key = tuple[str, str]  # (PartitionKey, RowKey)


@dataclass(frozen=True)
class Row:
    values: dict[str, Any]  # as a read answers them (values.py), plus the Timestamp of the last write
    etag: str


class Rows:
    def __init__(self) -> None:
        self._partitions: dict[str, dict[str, Row]] = {}
        self._partition_keys: list[str] = []  # sorted
        self._row_keys: dict[str, list[str]] = {}  # each sorted

    def get(self, key: Key) -> Row | None:
        return self._partitions.get(key[0], {}).get(key[1])

    def put(self, key: Key, row: Row) -> None:
        partition, row_key = key
        rows = self._partitions.get(partition)
        if rows is None:
            rows = self._partitions[partition] = {}
            bisect.insort(self._partition_keys, partition)
            self._row_keys[partition] = []
        if row_key not in rows:
            bisect.insort(self._row_keys[partition], row_key)
        rows[row_key] = row

    def remove(self, key: Key) -> None:
        partition, row_key = key
        rows = self._partitions[partition]
        del rows[row_key]
        keys = self._row_keys[partition]
        del keys[bisect.bisect_left(keys, row_key)]
        if not rows:
            del self._partitions[partition], self._row_keys[partition]
            del self._partition_keys[bisect.bisect_left(self._partition_keys, partition)]

    def scan(self, start: Key | None = None, partition: str | None = None) -> Iterator[tuple[Key, Row]]:
        """The rows from `start` on (inclusive), in order; only those of `partition` when given. The caller
        holds the table's lock while it iterates and must not change the rows meanwhile."""
        if partition is not None:
            if start is not None and start[0] > partition:
                return
            partitions = [partition] if partition in self._partitions else []
        else:
            first = bisect.bisect_left(self._partition_keys, start[0]) if start is not None else 0
            partitions = self._partition_keys[first:]
        for name in partitions:
            keys = self._row_keys[name]
            begin = bisect.bisect_left(keys, start[1]) if start is not None and start[0] == name else 0
            rows = self._partitions[name]
            for row_key in keys[begin:]:
                yield (name, row_key), rows[row_key]
