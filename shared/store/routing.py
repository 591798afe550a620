"""Where a collection's data lives when the scheduler stores it in more than one storage account.

Contracts:
- Account 0 is the primary (`AzureWebJobsStorage`); `SCHEDULER_STORAGE_ACCOUNTS` appends accounts 1..N-1.
- A collection's row, its jobs, their history and claims live in one account, its home,
  `account_of(collection, N)`: a jump consistent hash of the collection's job partition key. It depends on
  the key and on N only (not on a process, a release, or account names), so every instance agrees. Due
  entries are written in the job's home; each account's due index is dispatched apart, and an entry is
  deleted where it lies (one left behind by a rebalance is dispatched from the old account, once).
- Appending an account moves the home of about 1/N of the collections, all of them to the new account; no
  collection moves between old accounts. Those collections must be moved before the app runs with the
  longer list (docs/capacity.md, "Adding a storage account"; shared/store/rebalance.py).
- The queues, the dispatcher's watermark and the role assignments stay on the primary: the host's queue
  triggers bind to one connection, and their traffic is per message (many occurrences each) or per tick,
  not per job (docs/capacity.md).
- With one account the store uses the plain repositories and nothing here runs.

The collections' repository routed is here; the per-job ones (jobs, history, claims, due entries) are in
routed.py. The routed repositories are subclasses of the plain ones with every public method routed (by the key of
its first argument) or merged over the accounts (lists by subscription, scans). Their own `table` is a
stand-in that raises on use, so a method added to a repository and not taught here fails loudly, never
reads one account only; tests/store/test_accounts.py checks that every public method is routed.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterator
from concurrent.futures import Executor
from itertools import islice
from typing import Any, NoReturn

from ..keys import CollectionKey
from ..records import CollectionRecord
from .collections import KEY_NAMES, CollectionStore, Visible, kept_by
from .keys import collection_row, job_partition
from .tables import Table


def jump_hash(key: int, buckets: int) -> int:
    """Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm" (2014): a bucket in [0, buckets)
    such that going from n to n+1 buckets moves a key only to the new bucket, and only 1/(n+1) of them.

    Hand-written on purpose: where stored data lives must never change with a dependency's release.
    """
    bucket, candidate = -1, 0
    while candidate < buckets:
        bucket = candidate
        key = (key * 2862933555777941757 + 1) & 0xFFFFFFFFFFFFFFFF
        candidate = int((bucket + 1) * ((1 << 31) / ((key >> 33) + 1)))
    return bucket


def account_of(collection: CollectionKey, accounts: int) -> int:
    """The account (0 = primary) that holds the collection and everything in it."""
    if accounts <= 1:
        return 0
    digest = hashlib.sha256(job_partition(collection).encode()).digest()
    return jump_hash(int.from_bytes(digest[:8], "big"), accounts)


class NotRoutedError(RuntimeError):
    """A repository method that does not know which account to use (see the module's contract)."""


class Unrouted:
    """Stands for a repository's table whose rows are spread over accounts: every `Table` method raises (no
    base class, so none is inherited; `__getattr__` answers them all)."""

    def __init__(self, kind: str) -> None:  # no client on purpose
        self.kind = kind

    def __getattr__(self, name: str) -> NoReturn:
        raise NotRoutedError(
            f"the {self.kind} table spans several storage accounts: route this call in shared/store/routing.py"
        )


class RoutedCollections(CollectionStore):
    """`fan_out`: where the accounts are asked side by side (the runtime's routing lane, shared/threads.py); None:
    one after another (a store built by hand: tests, tools)."""

    def __init__(self, stores: list[CollectionStore], fan_out: Executor | None = None) -> None:
        self.stores = stores
        self.fan_out = fan_out
        self.table = Unrouted("collections")

    def _at(self, key: CollectionKey) -> CollectionStore:
        return self.stores[account_of(key, len(self.stores))]

    def get(self, key: CollectionKey) -> CollectionRecord | None:
        return self._at(key).get(key)

    def insert(self, record: CollectionRecord) -> CollectionRecord:
        return self._at(record.key).insert(record)

    def replace(self, record: CollectionRecord) -> CollectionRecord:
        return self._at(record.key).replace(record)

    def count_removed_job(self, key: CollectionKey, *args: Any, **kwargs: Any) -> None:
        self._at(key).count_removed_job(key, *args, **kwargs)

    def delete(self, key: CollectionKey) -> None:
        self._at(key).delete(key)

    def page_after(
        self,
        subscription: str,
        resource_group: str | None,
        size: int,
        after: str | None,
        visible: Visible | None = None,
    ) -> tuple[list[CollectionRecord], str | None]:
        """One page in row-key order over every account. Each account answers its own page; the merged page
        stops at the lowest cursor among the accounts that have more, since beyond it an account may hold
        rows not read yet. Pages stay full: that account alone contributed `size` rows up to its cursor (rows
        `visible` accepts, when given: the cursor is always one of them)."""

        def ask(store: CollectionStore) -> tuple[list[CollectionRecord], str | None]:
            return store.page_after(subscription, resource_group, size, after, visible)

        # Side by side: one round trip of latency.
        fan_out = self.fan_out
        answers = list(fan_out.map(ask, self.stores)) if fan_out is not None else [ask(s) for s in self.stores]
        limits = [cursor for _, cursor in answers if cursor is not None]
        limit = min(limits) if limits else None
        rows = sorted((collection_row(r.key), r) for records, _ in answers for r in records)
        rows = [(row, r) for row, r in rows if limit is None or row <= limit]
        if len(rows) > size:
            return [r for _, r in rows[:size]], rows[size - 1][0]
        return [r for _, r in rows], limit

    def skip(
        self, subscription: str, resource_group: str | None, count: int, visible: Visible | None = None
    ) -> tuple[str | None, bool]:
        """The cursor after the first `count` collections (that `visible` accepts) over every account: row keys
        only, merged in order."""
        if count <= 0:
            return None, False
        query, params = self._scope(subscription, resource_group)
        streams = [_row_keys(store.table, query, params, visible) for store in self.stores]
        last, seen = None, 0
        for row in islice(heapq.merge(*streams), count):
            last, seen = row, seen + 1
        return last, seen < count

    def keys_with_sku(self, subscription: str, sku: str) -> list[CollectionKey]:
        return [key for store in self.stores for key in store.keys_with_sku(subscription, sku)]


def _row_keys(table: Table, query: str, params: dict[str, Any], visible: Visible | None = None) -> Iterator[str]:
    # The service returns a partition's rows in row-key order, so each account's stream is sorted.
    keep = kept_by(visible)
    select = ["RowKey"] if keep is None else ["RowKey", *KEY_NAMES]
    for entity in table.query(query, params, select=select, page_size=1000):
        if keep is None or keep(entity):
            yield str(entity["RowKey"])
