"""Job history: one partition per job, row keys that sort newest first (like the real service's ids).

The real id is `{DateTime.MaxValue.Ticks - startTime.Ticks:020}:{Int64.MaxValue - n:020}`. Ours uses
the attempt's due time and a number derived from the execution, so writing the same attempt twice
(a redelivered message) overwrites one entry instead of adding a second.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from ..keys import JobKey
from ..model import JobExecutionStatus, JobHistoryActionName
from ..records import HistoryRecord
from .keys import job_scope
from .readable import read_each
from .tables import Entity, Table, as_datetime, chunks

_MAX_TICKS = 3155378975999999999  # DateTime.MaxValue.Ticks
_EPOCH_TICKS = 621355968000000000  # ticks of 1970-01-01
_INT64_MAX = 9223372036854775807


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
        record.history_id = history_id(due, record.execution_id, record.action_name.value, record.retry_count)
        self.table.upsert(_entity(record))
        return record

    def page(
        self, job: JobKey, status: JobExecutionStatus | None, size: int, continuation: Any = None
    ) -> tuple[list[HistoryRecord], Any]:
        query, params = "PartitionKey eq @pk", {"pk": job_scope(job)}
        if status is not None:
            query += " and Status eq @status"
            params["status"] = status.value
        entities, token = self.table.page(query, params, size, continuation)
        return read_each("history entry", entities, lambda e: _record(job, e)), token

    def delete_all(self, job: JobKey) -> None:
        self.table.delete_partition(job_scope(job))

    def delete_before(self, job: JobKey, cutoff: datetime) -> int:
        """Delete the job's entries of attempts due before `cutoff`; returns how many.

        Row keys sort newest first, so "older than cutoff" is a row-key range: the query returns only
        the rows to delete, whatever the partition's size.
        """
        lowest = f"{_MAX_TICKS - _ticks(cutoff) + 1:020d}"
        query = "PartitionKey eq @pk and RowKey ge @lo"
        rows = [e["RowKey"] for e in self.table.query(query, {"pk": job_scope(job), "lo": lowest}, select=["RowKey"])]
        return delete_rows(self.table, job_scope(job), rows)

    def keep_newest(self, job: JobKey, count: int) -> int:
        """Delete all but the job's `count` newest entries; returns how many. Reads every key it keeps."""
        query = "PartitionKey eq @pk"
        keys = (e["RowKey"] for e in self.table.query(query, {"pk": job_scope(job)}, select=["RowKey"]))
        rows = [row for index, row in enumerate(keys) if index >= count]  # the service returns keys in order
        return delete_rows(self.table, job_scope(job), rows)


def delete_rows(table: Table, partition: str, rows: list[str]) -> int:
    """Delete rows of one partition in batches of 100 (one entity-group transaction each)."""
    for batch in chunks(rows, 100):
        table.delete_batch(partition, batch)
    return len(rows)


def _ticks(instant: datetime) -> int:
    return _EPOCH_TICKS + int(instant.astimezone(UTC).timestamp() * 10_000_000)


def _entity(record: HistoryRecord) -> Entity:
    return {
        "PartitionKey": job_scope(record.key), "RowKey": record.history_id, "ExecutionId": record.execution_id,
        "ExpectedExecutionTime": record.expected_execution_time, "StartTime": record.start_time,
        "EndTime": record.end_time, "ActionName": record.action_name.value, "Status": record.status.value,
        "Message": record.message, "RetryCount": record.retry_count, "RepeatCount": record.repeat_count,
    }


def _record(job: JobKey, e: Entity) -> HistoryRecord:
    def when(name: str) -> datetime:
        return as_datetime(e.get(name)) or datetime.min.replace(tzinfo=UTC)

    return HistoryRecord(
        key=job, execution_id=e.get("ExecutionId", ""), expected_execution_time=when("ExpectedExecutionTime"),
        start_time=when("StartTime"), end_time=when("EndTime"), action_name=JobHistoryActionName(e["ActionName"]),
        status=JobExecutionStatus(e["Status"]), message=e.get("Message", ""), retry_count=int(e.get("RetryCount", 0)),
        repeat_count=int(e.get("RepeatCount", 0)), history_id=e["RowKey"],
    )
