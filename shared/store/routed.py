"""The per-job repositories (jobs, history, claims, due entries) over several storage accounts: each call goes to
the home of its job's collection (routing.py `account_of`), and the few that span accounts (a scan, the due index
of one account) say so. routing.py states the contract; its `Unrouted` stand-in makes a method not taught here
fail loudly.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from ..keys import CollectionKey, JobKey
from ..records import HistoryRecord, JobRecord, LedgerEntry
from .claims import Claim, ClaimStore, Expired, Wanted
from .due import DueEntry, DueIndex
from .history import HistoryStore
from .job_rows import JobSummary
from .jobs import JobStore
from .routing import Unrouted, account_of
from .tables import Entity, Table


class RoutedJobs(JobStore):
    def __init__(self, stores: list[JobStore]) -> None:
        self.stores = stores
        self.table = Unrouted("jobs")
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

    def get_together(self, collection: CollectionKey, keys: list[JobKey]) -> dict[JobKey, JobRecord | None]:
        return self._at(collection).get_together(collection, keys)

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
        self.table = Unrouted("history")

    def _at(self, job: JobKey) -> HistoryStore:
        return self.stores[account_of(job.collection_key, len(self.stores))]

    def add(self, record: HistoryRecord, due: datetime) -> HistoryRecord:
        return self._at(record.key).add(record, due)

    def add_group(
        self, records: list[tuple[HistoryRecord, datetime]], beside: Sequence[Entity] = ()
    ) -> list[HistoryRecord]:
        return self._at(records[0][0].key).add_group(records, beside) if records else []  # one collection: one account

    def table_for(self, collection: CollectionKey) -> Table:
        return self.stores[account_of(collection, len(self.stores))].table

    def attempts_of(self, job: JobKey, execution_id: str) -> list[HistoryRecord]:
        return self._at(job).attempts_of(job, execution_id)

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
        self.table = Unrouted("claims")

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

    def for_job(self, job: JobKey) -> DueIndex:
        return self._at(job)

    # A partition's reads and marks are one account's: its index is `in_account`'s or `for_job`'s.
    def read(self, bucket: str, shard: int) -> tuple[list[DueEntry], bool]:
        raise TypeError("one account's partition: read it through in_account(...)")

    def mark_waiting(self, partition: str) -> bool:
        raise TypeError("one account's partition: mark it through for_job(...)")

    def unmark_waiting(self, partition: str) -> None:
        raise TypeError("one account's partition: unmark it through in_account(...)")

    def to_dispatch(self, bucket: str, shard: int) -> list[DueEntry]:
        raise TypeError("one account's partition: dispatch it through in_account(...)")

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
