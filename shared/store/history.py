"""Job history: a job's rows in its collection's partition, keyed `<job>|<id>`, ids sorting newest first (like
the real service's ids).

The real id is `{DateTime.MaxValue.Ticks - startTime.Ticks:020}:{Int64.MaxValue - n:020}`. Ours uses
the attempt's due time and a number derived from the execution, so writing the same attempt twice
(a redelivered message) overwrites one entry instead of adding a second. The id is what the API shows; the
job's prefix is not.

The job's rows also hold the occurrence ledger (ledger.py: one row per occurrence, ids starting with `L`,
after every attempt row): `page` lists the attempts (2016-03-01 history), `ledger_page` the ledger.

Why the collection's partition: the attempts of a collection's jobs that answer together are written in one
entity-group transaction (`add_group`, up to 50 attempts with their ledger rows), where a partition per job
cost a request per attempt, the largest share of an execution's storage requests and of the CPU of a herd
(issue 22). A collection holds at most 1,000 jobs, so a herd of one writes at most 2,000 rows, within the
2,000 entities a second a partition takes. Rows of the layout before (a partition per job, `keys.job_scope`)
are moved into this one by `adopt_legacy`, which retention runs for every job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ..keys import CollectionKey, JobKey
from ..model import JobExecutionStatus, JobHistoryActionName
from ..model.extensions import HistoryRetention
from ..records import HistoryRecord, LedgerEntry
from . import ledger
from .keys import job_partition, job_rows, job_rows_end, job_scope
from .readable import read_each
from .tables import Entity, Table, as_datetime, chunks, grouped
from .transaction import MAX_OPERATIONS

_MAX_TICKS = 3155378975999999999  # DateTime.MaxValue.Ticks
_EPOCH_TICKS = 621355968000000000  # ticks of 1970-01-01
_INT64_MAX = 9223372036854775807
# An attempt writes two rows (its own and its occurrence's ledger row); a group fills one transaction.
ATTEMPTS_PER_GROUP = MAX_OPERATIONS // 2


def history_id(expected: datetime, execution_id: str, action: str, attempt: int) -> str:
    ticks = _ticks(expected)
    digest = hashlib.sha1(f"{execution_id}|{action}|{attempt}".encode()).digest()
    # Newer attempts of one occurrence must sort first, so the attempt number leads the tie-breaker.
    n = attempt * 10**15 + int.from_bytes(digest[:6], "big") % 10**15
    return f"{_MAX_TICKS - ticks:020d}:{_INT64_MAX - n:020d}"


class HistoryStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def add(self, record: HistoryRecord, due: datetime) -> HistoryRecord:
        """Write an attempt (or a note); an attempt of a main action writes its occurrence's ledger row in the same
        entity-group transaction (one request either way). The record as stored (with its id)."""
        return self.add_group([(record, due)])[0]

    def add_group(
        self, records: list[tuple[HistoryRecord, datetime]], beside: Sequence[Entity] = ()
    ) -> list[HistoryRecord]:
        """Attempts of one collection (at most ATTEMPTS_PER_GROUP, `history_groups`), each with the due instant
        it is keyed by and its occurrence's ledger row, in one entity-group transaction; `beside`: rows of the
        collection's partition written in it too (the dead letters these attempts leave: dead_letters.py), the
        caller keeping the whole within MAX_OPERATIONS rows. The records as stored (with their ids), in order."""
        stored = [_keyed(record, due) for record, due in records]
        rows: list[Entity] = list(beside)
        for record in stored:
            entry = ledger.of_attempt(record)
            rows.extend([_entity(record)] if entry is None else [_entity(record), ledger.entity(entry)])
        self._upsert(rows)
        return stored

    def add_all(self, notes: list[tuple[HistoryRecord, datetime]], entries: list[LedgerEntry]) -> list[HistoryRecord]:
        """Notes (with the due instant each is keyed by) and ledger entries, in transactions of up to 100 rows
        per collection's partition. The notes as stored (with their ids), in order."""
        stored = [_keyed(note, due) for note, due in notes]
        self._upsert([_entity(note) for note in stored] + [ledger.entity(entry) for entry in entries])
        return stored

    def _upsert(self, rows: list[Entity]) -> None:
        by_partition: dict[str, dict[str, Entity]] = {}
        for row in rows:  # a transaction names a row once: the last word on it wins
            by_partition.setdefault(row["PartitionKey"], {})[row["RowKey"]] = row
        for unique in by_partition.values():
            for batch in chunks(list(unique.values()), MAX_OPERATIONS):
                if len(batch) == 1:
                    self.table.upsert(batch[0])
                else:
                    self.table.upsert_batch(batch)

    def table_for(self, collection: CollectionKey) -> Table:
        """The table holding the collection's partition (its dead letters' too: dead_letters.py)."""
        return self.table

    def attempts_of(self, job: JobKey, execution_id: str) -> list[HistoryRecord]:
        """The job's attempts of one occurrence identity (its replays' included), newest first."""
        query, params = ledger.attempts_query(job, None)
        entities = self.table.query(f"{query} and ExecutionId eq @execution", params | {"execution": execution_id})
        return read_each("history entry", entities, lambda e: _record(job, e))

    def adopt_legacy(self, job: JobKey) -> int:
        """Move the job's rows of the layout before (a partition of its own) into its collection's partition;
        how many. One query when there is nothing left to move."""
        legacy = job_scope(job)
        rows = list(self.table.query("PartitionKey eq @pk", {"pk": legacy}))
        moved = [
            {k: v for k, v in row.items() if k != "etag"}
            | {"PartitionKey": job_partition(job.collection_key), "RowKey": job_rows(job, str(row["RowKey"]))}
            for row in rows
        ]
        self._upsert(moved)
        return delete_rows(self.table, legacy, [str(row["RowKey"]) for row in rows])

    def page(
        self, job: JobKey, status: JobExecutionStatus | None, size: int, continuation: Any = None
    ) -> tuple[list[HistoryRecord], Any]:
        """The job's attempts and notes, newest first (2016-03-01 history: no ledger row)."""
        query, params = ledger.attempts_query(job, status)
        entities, token = self.table.page(query, params, size, continuation)
        return read_each("history entry", entities, lambda e: _record(job, e)), token

    def ledger_page(
        self,
        job: JobKey,
        status: JobExecutionStatus | None,
        since: datetime | None,
        until: datetime | None,
        size: int,
        continuation: Any = None,
        *,
        since_inclusive: bool = True,
        until_inclusive: bool = False,
    ) -> tuple[list[LedgerEntry], Any]:
        """The job's ledger, newest occurrence first, optionally of one status and of a time range."""
        query, params = ledger.ledger_query(job, status, since, until, since_inclusive, until_inclusive)
        entities, token = self.table.page(query, params, size, continuation)
        return read_each("ledger entry", entities, lambda e: ledger.record(job, e)), token

    def prune(self, job: JobKey, retention: HistoryRetention, now: datetime) -> int:
        """Apply a retention to the job's attempts and, apart, to its ledger: the newest `maxEntriesPerJob` of
        each, none older than `maxAge`, but a failed row until `failureMaxAge`. Reads the partition's keys and
        statuses once (its size is bounded by the retention itself, plus what a day added)."""
        keep, age, failure_age = (
            retention.effective_max_entries,
            retention.effective_max_age,
            retention.effective_failure_max_age,
        )
        rows = self._rows_of(job, ["RowKey", "Status"])
        seen = {"attempts": 0, "ledger": 0}
        doomed: list[str] = []
        for row in rows:  # newest first within each range, attempts before the ledger
            row_key = str(row["RowKey"])
            key = row_key.split("|", 1)[-1]
            kind = "ledger" if key.startswith(ledger.PREFIX) else "attempts"
            seen[kind] += 1
            try:
                instant_ticks = _MAX_TICKS - int(key.removeprefix(ledger.PREFIX).split(":", 1)[0])
            except ValueError:
                continue  # not a key of ours
            elapsed = timedelta(microseconds=(_ticks(now) - instant_ticks) // 10)
            failed = row.get("Status") == JobExecutionStatus.FAILED.value
            if elapsed > failure_age or (not failed and (elapsed > age or seen[kind] > keep)):
                doomed.append(row_key)
        return delete_rows(self.table, job_partition(job.collection_key), doomed)

    def _rows_of(self, job: JobKey, select: list[str]) -> Iterator[Entity]:
        query = "PartitionKey eq @pk and RowKey ge @low and RowKey lt @high"
        params = {"pk": job_partition(job.collection_key), "low": job_rows(job), "high": job_rows_end(job)}
        return self.table.query(query, params, select=select)

    def delete_all(self, job: JobKey) -> None:
        rows = [str(e["RowKey"]) for e in self._rows_of(job, ["RowKey"])]
        delete_rows(self.table, job_partition(job.collection_key), rows)
        self.table.delete_partition(job_scope(job))  # what the layout before left, if anything

    def delete_before(self, job: JobKey, cutoff: datetime) -> int:
        """Delete the job's entries of attempts due before `cutoff`; returns how many.

        Row keys sort newest first, so "older than cutoff" is a row-key range: the query returns only
        the rows to delete, whatever the partition's size.
        """
        lowest = job_rows(job, f"{_MAX_TICKS - _ticks(cutoff) + 1:020d}")
        query = "PartitionKey eq @pk and RowKey ge @lo and RowKey lt @ledger"
        params = {"pk": job_partition(job.collection_key), "lo": lowest, "ledger": job_rows(job, ledger.PREFIX)}
        rows = [e["RowKey"] for e in self.table.query(query, params, select=["RowKey"])]
        return delete_rows(self.table, job_partition(job.collection_key), rows)

    def keep_newest(self, job: JobKey, count: int) -> int:
        """Delete all but the job's `count` newest entries; returns how many. Reads every key it keeps."""
        query = "PartitionKey eq @pk and RowKey ge @low and RowKey lt @ledger"
        params = {"pk": job_partition(job.collection_key), "low": job_rows(job), "ledger": job_rows(job, ledger.PREFIX)}
        keys = (e["RowKey"] for e in self.table.query(query, params, select=["RowKey"]))
        rows = [row for index, row in enumerate(keys) if index >= count]  # the service returns keys in order
        return delete_rows(self.table, job_partition(job.collection_key), rows)


def delete_rows(table: Table, partition: str, rows: list[str]) -> int:
    """Delete rows of one partition in batches of MAX_OPERATIONS (one entity-group transaction each)."""
    for batch in chunks(rows, MAX_OPERATIONS):
        table.delete_batch(partition, batch)
    return len(rows)


def _ticks(instant: datetime) -> int:
    return _EPOCH_TICKS + int(instant.astimezone(UTC).timestamp() * 10_000_000)


def _keyed(record: HistoryRecord, due: datetime) -> HistoryRecord:
    """The record under its id (`history_id` of the due instant it is keyed by): what the store writes."""
    return replace(
        record, history_id=history_id(due, record.execution_id, record.action_name.value, record.retry_count)
    )


def _entity(record: HistoryRecord) -> Entity:
    return {
        "PartitionKey": job_partition(record.key.collection_key),
        "RowKey": job_rows(record.key, record.history_id),
        "ExecutionId": record.execution_id,
        "ExpectedExecutionTime": record.expected_execution_time,
        "StartTime": record.start_time,
        "EndTime": record.end_time,
        "ActionName": record.action_name.value,
        "Status": record.status.value,
        "Message": record.message,
        "RetryCount": record.retry_count,
        "RepeatCount": record.repeat_count,
        # The occurrence the attempt belongs to (its ledger row's): the newer api-version's attempts show it.
        **({"Occurrence": record.occurrence, "Trigger": record.trigger} if record.occurrence is not None else {}),
    }


def _record(job: JobKey, e: Entity) -> HistoryRecord:
    def when(name: str) -> datetime:
        return as_datetime(e.get(name)) or datetime.min.replace(tzinfo=UTC)

    return HistoryRecord(
        key=job,
        execution_id=e.get("ExecutionId", ""),
        expected_execution_time=when("ExpectedExecutionTime"),
        start_time=when("StartTime"),
        end_time=when("EndTime"),
        action_name=JobHistoryActionName(e["ActionName"]),
        status=JobExecutionStatus(e["Status"]),
        message=e.get("Message", ""),
        retry_count=int(e.get("RetryCount", 0)),
        repeat_count=int(e.get("RepeatCount", 0)),
        history_id=str(e["RowKey"]).split("|", 1)[-1],
        occurrence=as_datetime(e.get("Occurrence")),  # None on a note, and on rows written before it was kept
        trigger=str(e.get("Trigger") or "schedule"),
    )


def history_groups(records: Iterable[tuple[HistoryRecord, datetime]]) -> list[list[tuple[HistoryRecord, datetime]]]:
    """Attempts in groups that `add_group` writes in one transaction: one collection, ATTEMPTS_PER_GROUP at most."""
    return grouped(records, lambda item: job_partition(item[0].key.collection_key), ATTEMPTS_PER_GROUP)
