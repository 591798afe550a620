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

The routed repositories are subclasses of the plain ones with every public method routed (by the key of
its first argument) or merged over the accounts (lists by subscription, scans). Their own `table` is a
stand-in that raises on use, so a method added to a repository and not taught here fails loudly, never
reads one account only; tests/store/test_accounts.py checks that every public method is routed.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Executor
from datetime import datetime
from itertools import islice
from typing import Any, NoReturn

from ..keys import CollectionKey, JobKey
from ..records import CollectionRecord, HistoryRecord, JobRecord, LedgerEntry
from .claims import Claim, ClaimStore, Expired, Wanted
from .collections import KEY_NAMES, CollectionStore, Visible, kept_by
from .due import DueEntry, DueIndex
from .history import HistoryStore
from .jobs import JobStore, JobSummary
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


class _Unrouted:
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
        self.table = _Unrouted("collections")

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


class RoutedJobs(JobStore):
    def __init__(self, stores: list[JobStore]) -> None:
        self.stores = stores
        self.table = _Unrouted("jobs")
        self.keyring = stores[0].keyring

    def _at(self, key: CollectionKey) -> JobStore:
        return self.stores[account_of(key, len(self.stores))]

    def get(self, key: JobKey) -> JobRecord | None:
        return self._at(key.collection_key).get(key)

    def insert(self, record: JobRecord) -> JobRecord:
        return self._at(record.key.collection_key).insert(record)

    def replace(self, record: JobRecord) -> JobRecord:
        return self._at(record.key.collection_key).replace(record)

    def landed(self, record: JobRecord) -> JobRecord | None:
        return self._at(record.key.collection_key).landed(record)

    def get_many(self, collection: CollectionKey, keys: list[JobKey]) -> dict[JobKey, JobRecord | None]:
        return self._at(collection).get_many(collection, keys)

    def replace_many(self, records: list[JobRecord]) -> list[JobRecord | None]:
        return self._at(records[0].key.collection_key).replace_many(records) if records else []

    def delete(self, key: JobKey, *args: Any, **kwargs: Any) -> bool:
        return self._at(key.collection_key).delete(key, *args, **kwargs)

    def delete_rows_of(self, collection: CollectionKey) -> None:
        self._at(collection).delete_rows_of(collection)

    def page_after(self, collection: CollectionKey, *args: Any, **kwargs: Any) -> tuple[list[JobRecord], str | None]:
        return self._at(collection).page_after(collection, *args, **kwargs)

    def skip(self, collection: CollectionKey, *args: Any, **kwargs: Any) -> tuple[str | None, bool]:
        return self._at(collection).skip(collection, *args, **kwargs)

    def count_up_to(self, collection: CollectionKey, limit: int) -> int:
        return self._at(collection).count_up_to(collection, limit)

    def all(self, collection: CollectionKey) -> list[JobRecord]:
        return self._at(collection).all(collection)

    def rewrap_all(self) -> tuple[int, int]:
        done = current = 0
        for store in self.stores:
            more, same = store.rewrap_all()
            done, current = done + more, current + same
        return done, current

    def summaries(self) -> Iterator[JobSummary]:
        for store in self.stores:
            yield from store.summaries()


class RoutedHistory(HistoryStore):
    def __init__(self, stores: list[HistoryStore]) -> None:
        self.stores = stores
        self.table = _Unrouted("history")

    def _at(self, job: JobKey) -> HistoryStore:
        return self.stores[account_of(job.collection_key, len(self.stores))]

    def add(self, record: HistoryRecord, due: datetime) -> HistoryRecord:
        return self._at(record.key).add(record, due)

    def add_group(self, records: list[tuple[HistoryRecord, datetime]]) -> list[HistoryRecord]:
        return self._at(records[0][0].key).add_group(records) if records else []  # one collection: one account

    def adopt_legacy(self, job: JobKey) -> int:
        return self._at(job).adopt_legacy(job)

    def page(self, job: JobKey, *args: Any, **kwargs: Any) -> tuple[list[HistoryRecord], Any]:
        return self._at(job).page(job, *args, **kwargs)

    def add_all(self, notes: list[tuple[HistoryRecord, datetime]], entries: list[LedgerEntry]) -> list[HistoryRecord]:
        stored: dict[int, HistoryRecord] = {}  # by the note's place in `notes`: returned in their order
        for index, store in enumerate(self.stores):
            mine = [i for i, n in enumerate(notes) if account_of(n[0].key.collection_key, len(self.stores)) == index]
            theirs = [e for e in entries if account_of(e.key.collection_key, len(self.stores)) == index]
            if mine or theirs:
                stored.update(zip(mine, store.add_all([notes[i] for i in mine], theirs), strict=True))
        return [stored[i] for i in range(len(notes))]

    def ledger_page(self, job: JobKey, *args: Any, **kwargs: Any) -> tuple[list[LedgerEntry], Any]:
        return self._at(job).ledger_page(job, *args, **kwargs)

    def prune(self, job: JobKey, *args: Any, **kwargs: Any) -> int:
        return self._at(job).prune(job, *args, **kwargs)

    def delete_all(self, job: JobKey) -> None:
        self._at(job).delete_all(job)

    def delete_before(self, job: JobKey, cutoff: datetime) -> int:
        return self._at(job).delete_before(job, cutoff)

    def keep_newest(self, job: JobKey, count: int) -> int:
        return self._at(job).keep_newest(job, count)


class RoutedClaims(ClaimStore):
    def __init__(self, stores: list[ClaimStore]) -> None:
        self.stores = stores
        self.table = _Unrouted("claims")

    def _at(self, job: JobKey) -> ClaimStore:
        return self.stores[account_of(job.collection_key, len(self.stores))]

    def try_claim(self, job: JobKey, *args: Any, **kwargs: Any) -> Claim | Expired | None:
        return self._at(job).try_claim(job, *args, **kwargs)

    def take_over(self, expired: Expired, *args: Any, **kwargs: Any) -> Claim | None:
        return self._at(expired.job).take_over(expired, *args, **kwargs)

    def claim_each(self, wanted: Sequence[Wanted], now: datetime) -> list[Claim | Expired | None]:
        return self._at(wanted[0].job).claim_each(wanted, now) if wanted else []  # one collection: one account

    def renew(self, claim: Claim, *args: Any, **kwargs: Any) -> bool:
        return self._at(claim.job).renew(claim, *args, **kwargs)

    def renew_group(self, claims: Sequence[Claim], *args: Any) -> list[bool]:
        return self._at(claims[0].job).renew_group(claims, *args) if claims else []

    def complete(self, claim: Claim) -> None:
        self._at(claim.job).complete(claim)

    def release(self, claim: Claim) -> None:
        self._at(claim.job).release(claim)

    def delete_before(self, job: JobKey, cutoff: datetime) -> int:
        return self._at(job).delete_before(job, cutoff)

    def delete_all(self, job: JobKey) -> None:
        self._at(job).delete_all(job)


class RoutedDue(DueIndex):
    """The due index of every account. An entry lies in its job's account; the watermark (and the shard
    count it records) is the primary's, read by every account's index, so one tick covers all accounts.
    `table` is the primary's due table (what the health check's backlog query reads)."""

    PRIMARY_ONLY = frozenset(
        {"watermark", "shards_to_read", "progress", "set_watermark", "init_watermark", "partition"}
    )

    def __init__(self, indexes: list[DueIndex]) -> None:
        super().__init__(indexes[0].table, indexes[0].state, indexes[0].shards)
        self.indexes = indexes

    @property
    def accounts(self) -> int:
        return len(self.indexes)

    def in_account(self, account: int) -> DueIndex:
        return self.indexes[account]

    def _at(self, job: JobKey) -> DueIndex:
        return self.indexes[account_of(job.collection_key, len(self.indexes))]

    def add(self, job: JobKey, due: datetime, generation: int) -> None:
        self._at(job).add(job, due, generation)

    def add_many(self, items: Iterable[tuple[JobKey, datetime, int]]) -> None:
        groups: dict[int, list[tuple[JobKey, datetime, int]]] = {}
        for item in items:
            groups.setdefault(account_of(item[0].collection_key, len(self.indexes)), []).append(item)
        for account, group in groups.items():
            self.indexes[account].add_many(group)

    def remove(self, job: JobKey, due: datetime) -> None:
        self._at(job).remove(job, due)

    def remove_entries(self, entries: Iterable[DueEntry]) -> None:
        """Where each entry lies: an entry left in an account its collection moved away from (rebalance.py)
        is dispatched from there, and its job's following entry is added in the job's own account."""
        groups: dict[int, list[DueEntry]] = {}
        for entry in entries:
            groups.setdefault(entry.account, []).append(entry)
        for account, group in groups.items():
            self.indexes[account].remove_entries(group)

    def entries(self, bucket: str, shard: int | None = None) -> list[DueEntry]:
        return [entry for index in self.indexes for entry in index.entries(bucket, shard)]

    def leftovers_before(self, bucket: str, limit: int = 1000) -> set[tuple[str, int]]:
        return {found for index in self.indexes for found in index.leftovers_before(bucket, limit)}
