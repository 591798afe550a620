"""The due index: which job is due when, partitioned by the minute it falls in and a shard of the job.

A dispatcher tick reads only the partitions (minute bucket x shard) that are due, never the jobs table,
so its cost follows the number of due occurrences, not the number of jobs. Sharding spreads one minute's
entries over `shards` partitions, so several instances dispatch a minute side by side and no partition
carries more than its share (a table partition serves about 2,000 entities/s).

Contracts:
- A job's shard is a stable hash of its key modulo the shard count (an app setting). Shard 0's partition
  is the bare bucket, the unsharded index's layout, so entries written before sharding are still read.
- The watermark row also records the highest shard count ever used: the dispatcher reads that many
  shards, so lowering the setting strands no entry (an entry in a shard beyond the new count is read,
  dispatched or found stale, and deleted where it lies).
- `add_many`/`remove_entries` write one entity-group transaction per partition and 100 entities; a
  delete that fails (an entity already gone) deletes the rows still there in a second, and falls back to single
  deletes, which ignore missing rows, only when that one fails too.
- A partition may hold one more row, its waiting marker (`mark_waiting`): a dispatch task is on its way to it.
  It is no entry (`read` tells it apart) and sorts after every entry's row (they begin with a digit).
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import islice

from ..keys import JobKey
from .keys import job_partition, job_row
from .tables import BatchFailed, ConcurrencyError, Entity, Table, as_datetime, as_int, chunks, int64
from .transaction import MAX_OPERATIONS

_STATE_PARTITION = "dispatcher"
_WATERMARK_ROW = "watermark"
_WAITING_ROW = "~waiting"
MAX_SHARDS = 99


def bucket_of(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y%m%d%H%M")


def bucket_start(bucket: str) -> datetime:
    return datetime.strptime(bucket, "%Y%m%d%H%M").replace(tzinfo=UTC)


def shard_of(job: JobKey, shards: int) -> int:
    """Stable across processes and releases (crc32, not Python's salted hash)."""
    return zlib.crc32(f"{job_partition(job.collection_key)}|{job_row(job)}".encode()) % max(shards, 1)


def partition_of(bucket: str, shard: int) -> str:
    return bucket if shard == 0 else f"{bucket}-{shard:02d}"


@dataclass(frozen=True)
class DueEntry:
    job: JobKey
    due: datetime
    generation: int
    partition: str = ""  # where the entry lies (its shard may differ from the job's under another shard count)
    account: int = 0  # the storage account it lies in (after an account is added, maybe not its job's)


def _row(job: JobKey, due: datetime) -> str:
    return f"{due.astimezone(UTC):%Y%m%dT%H%M%S}|{job_partition(job.collection_key)}|{job_row(job)}"


class DueIndex:
    def __init__(self, table: Table, state: Table, shards: int = 1, account: int = 0) -> None:
        self.table = table
        self.state = state
        self.shards = min(max(shards, 1), MAX_SHARDS)
        self.account = account  # which storage account's entries these are (shared/store/routing.py)

    @property
    def accounts(self) -> int:
        """Storage accounts holding due entries (more than one only in routing.RoutedDue)."""
        return 1

    def in_account(self, account: int) -> DueIndex:
        """The index of one account's entries (the dispatcher reads each account's partitions apart)."""
        return self

    def partition(self, job: JobKey, due: datetime) -> str:
        return partition_of(bucket_of(due), shard_of(job, self.shards))

    def _entity(self, job: JobKey, due: datetime, generation: int) -> Entity:
        return {
            "PartitionKey": self.partition(job, due),
            "RowKey": _row(job, due),
            "Due": due,
            "Generation": int64(generation),
            "Subscription": job.subscription,
            "ResourceGroup": job.resource_group,
            "Collection": job.collection,
            "Job": job.job,
        }

    def add(self, job: JobKey, due: datetime, generation: int) -> None:
        self.table.upsert(self._entity(job, due, generation))

    def add_many(self, items: Iterable[tuple[JobKey, datetime, int]]) -> None:
        """Upsert many entries, one transaction per partition and 100 entries."""
        groups: dict[str, list[Entity]] = {}
        for job, due, generation in items:
            entity = self._entity(job, due, generation)
            groups.setdefault(entity["PartitionKey"], []).append(entity)
        for entities in groups.values():
            for batch in chunks(entities, MAX_OPERATIONS):
                if len(batch) == 1:
                    self.table.upsert(batch[0])
                    continue
                self.table.upsert_batch(batch)

    def remove(self, job: JobKey, due: datetime) -> None:
        self.table.delete(self.partition(job, due), _row(job, due))

    def remove_entries(self, entries: Iterable[DueEntry]) -> None:
        """Delete entries where they lie, one transaction per partition and 100 entries."""
        groups: dict[str, list[str]] = {}
        for entry in entries:
            groups.setdefault(entry.partition or self.partition(entry.job, entry.due), []).append(
                _row(entry.job, entry.due)
            )
        for partition, rows in groups.items():
            for batch in chunks(rows, MAX_OPERATIONS):
                if len(batch) > 1 and self._delete_together(partition, batch):
                    continue
                for row in batch:
                    self.table.delete(partition, row)

    def _delete_together(self, partition: str, rows: list[str]) -> bool:
        """Delete the rows in one transaction; when one is gone already (a dispatch task run twice, after its
        watchdog, removes what the other run removed: under a backlog most of a batch), the rows still there, read
        in one range query, in a second. False when that one fails too (a remover at work right now): the caller
        deletes one by one, which a missing row does not fail. Under overload a delete per row was 0.46 requests
        an execution."""
        try:
            self.table.delete_batch(partition, rows)
            return True
        except BatchFailed:
            pass
        query = "PartitionKey eq @pk and RowKey ge @low and RowKey le @high"
        found = self.table.query(query, {"pk": partition, "low": min(rows), "high": max(rows)}, select=["RowKey"])
        there = {str(e["RowKey"]) for e in found}
        left = [row for row in rows if row in there]
        try:
            if len(left) > 1:
                self.table.delete_batch(partition, left)
            elif left:
                self.table.delete(partition, left[0])
        except BatchFailed:
            return False
        return True

    def entries(self, bucket: str, shard: int | None = None) -> list[DueEntry]:
        """The entries of one partition: a bucket's shard, or (shard None) every shard of the bucket."""
        if shard is None:
            return [e for s in range(self.shards_to_read()) for e in self.entries(bucket, s)]
        return self.read(bucket, shard)[0]

    def read(self, bucket: str, shard: int) -> tuple[list[DueEntry], bool]:
        """One partition's entries, and whether its waiting marker was there."""
        partition = partition_of(bucket, shard)
        found, waiting = [], False
        for e in self.table.query("PartitionKey eq @pk", {"pk": partition}):
            if e["RowKey"] == _WAITING_ROW:
                waiting = True
                continue
            key = JobKey(e["Subscription"], e["ResourceGroup"], e["Collection"], e["Job"])
            due = as_datetime(e.get("Due"))
            if due is not None:
                found.append(DueEntry(key, due, as_int(e.get("Generation")), partition, self.account))
        return found, waiting

    def for_job(self, job: JobKey) -> DueIndex:
        """The index of the account the job's entries lie in."""
        return self

    def mark_waiting(self, partition: str) -> bool:
        """Mark that a dispatch task is on its way to the partition: False when the mark is there already. A
        writer that finds it relies on that task, so whoever removes the mark (`unmark_waiting`) reads the
        partition after removing it: an entry written before a mark was found is read then."""
        try:
            self.table.insert({"PartitionKey": partition, "RowKey": _WAITING_ROW})
        except ConcurrencyError:
            return False
        return True

    def unmark_waiting(self, partition: str) -> None:
        self.table.delete(partition, _WAITING_ROW)

    def to_dispatch(self, bucket: str, shard: int) -> list[DueEntry]:
        """A dispatch task's read of its partition: when the waiting mark is there, the entries read again after
        the mark is removed (the writers that found it rely on that read)."""
        entries, waiting = self.read(bucket, shard)
        if not waiting:
            return entries
        self.unmark_waiting(partition_of(bucket, shard))
        return self.read(bucket, shard)[0]

    def leftovers_before(self, bucket: str, limit: int = 1000) -> set[tuple[str, int]]:
        """(bucket, shard) of entries left in buckets before `bucket` (a failed or lost dispatch); one
        range query, which finds nothing in the normal case."""
        found = self.table.query("PartitionKey lt @pk", {"pk": bucket}, select=["PartitionKey"], page_size=limit)
        partitions = set()
        for entity in islice(found, limit):
            partitions.add(parse_partition(entity["PartitionKey"]))
        return partitions

    def _state(self) -> Entity | None:
        return self.state.get(_STATE_PARTITION, _WATERMARK_ROW)

    def watermark(self) -> datetime | None:
        """Start of the last bucket a tick completed; None before the first tick."""
        entity = self._state()
        return as_datetime(entity.get("Bucket")) if entity else None

    def shards_to_read(self, entity: Entity | None = None) -> int:
        """The shard count in force, or a higher one used before (its entries may still be due)."""
        entity = entity if entity is not None else self._state()
        return max(self.shards, as_int(entity.get("Shards")) if entity else 0)

    def progress(self) -> tuple[datetime | None, int]:
        """The watermark and the number of shards to read, in one read."""
        entity = self._state()
        return (as_datetime(entity.get("Bucket")) if entity else None), self.shards_to_read(entity or {})

    def set_watermark(self, bucket_start_time: datetime, shards: int | None = None) -> None:
        self.state.upsert(
            {
                "PartitionKey": _STATE_PARTITION,
                "RowKey": _WATERMARK_ROW,
                "Bucket": bucket_start_time,
                "Shards": max(shards or 0, self.shards),
            }
        )

    def init_watermark(self, now: datetime) -> None:
        """Before any job exists, so that no due entry can ever precede the watermark."""
        entity = {
            "PartitionKey": _STATE_PARTITION,
            "RowKey": _WATERMARK_ROW,
            "Bucket": bucket_start(bucket_of(now)) - timedelta(minutes=1),
            "Shards": self.shards,
        }
        with contextlib.suppress(ConcurrencyError):  # already initialised: the normal case
            self.state.insert(entity)


def parse_partition(partition: str) -> tuple[str, int]:
    """(bucket, shard) of a due-index partition key."""
    bucket, _, shard = partition.partition("-")
    return bucket, int(shard or 0)
