"""The occurrence ledger's rows: among each job's history rows, beside its attempts, one row per occurrence.

Row keys (after the job's prefix, `<job>|`, history.py):
`L{DateTime.MaxValue.Ticks - occurrence ticks:020}:{12 hex digits of the execution id's hash}`,
so an occurrence's row is the same whoever writes it (its attempts, a dispatcher letting it go, an executor
dropping it): the last word on an occurrence replaces the row. The `L` sorts after every attempt row (those
start with a digit), so each of the two lists is one row-key range: 2016-03-01 history reads from `<job>|`
to `<job>|L`, the ledger from `<job>|L` to `<job>|M`, and a time range of occurrences is a narrower range of
the latter (newest first, like the attempts).

Cost: an attempt of a main action writes its occurrence's row in the same entity-group transaction as its
history row (one request, as before); rows of occurrences that did not run are written in transactions of
up to 100 per partition by whoever let them go.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

from ..keys import JobKey
from ..model import DstShift, JobExecutionStatus, JobHistoryActionName, LedgerReason, WaitCause
from ..records import HistoryRecord, LedgerEntry
from .keys import job_partition, job_rows
from .tables import Entity, as_datetime

PREFIX = "L"
END = "M"  # the first key after every ledger row
_MAX_TICKS = 3155378975999999999  # DateTime.MaxValue.Ticks
_EPOCH_TICKS = 621355968000000000  # ticks of 1970-01-01


def ticks(instant: datetime) -> int:
    return _EPOCH_TICKS + int(instant.astimezone(UTC).timestamp() * 10_000_000)


def _position(instant: datetime) -> int:
    return _MAX_TICKS - ticks(instant)


def ledger_id(occurrence: datetime, execution_id: str) -> str:
    return f"{PREFIX}{_position(occurrence):020d}:{hashlib.sha1(execution_id.encode()).hexdigest()[:12]}"


def of_attempt(record: HistoryRecord) -> LedgerEntry | None:
    """The ledger entry an attempt leaves for its occurrence (main actions only: an error action does not
    change what came of the occurrence); None for a note."""
    if record.occurrence is None or record.action_name != JobHistoryActionName.MAIN_ACTION:
        return None
    return LedgerEntry(
        key=record.key,
        execution_id=record.execution_id,
        occurrence=record.occurrence,
        trigger=record.trigger,
        status=record.status,
        message=record.message,
        start_time=record.start_time,
        end_time=record.end_time,
        retry_count=record.retry_count,
        attempts=record.retry_count + 1,
        repeat_count=record.repeat_count,
        waited=record.waited,
        waited_for=record.waited_for,
        reason=record.reason,
        dst_shift=record.dst_shift,
    )


def entity(entry: LedgerEntry) -> Entity:
    return {
        "PartitionKey": job_partition(entry.key.collection_key),
        "RowKey": job_rows(entry.key, ledger_id(entry.occurrence, entry.execution_id)),
        "ExecutionId": entry.execution_id,
        "Occurrence": entry.occurrence,
        "Trigger": entry.trigger,
        "Status": entry.status.value,
        "Reason": entry.reason.value if entry.reason is not None else None,
        "Message": entry.message,
        "StartTime": entry.start_time,
        "EndTime": entry.end_time,
        "RetryCount": entry.retry_count,
        "Attempts": entry.attempts,
        "RepeatCount": entry.repeat_count,
        "WaitedSeconds": entry.waited.total_seconds() if entry.waited is not None else None,
        "WaitedFor": entry.waited_for.value if entry.waited_for is not None else None,
        "DstShift": entry.dst_shift.value if entry.dst_shift is not None else None,
    }


def record(job: JobKey, e: Entity) -> LedgerEntry:
    occurrence = as_datetime(e.get("Occurrence"))
    if occurrence is None:
        raise ValueError("a ledger row without its occurrence")
    reason = e.get("Reason")
    waited = e.get("WaitedSeconds")
    waited_for = e.get("WaitedFor")
    return LedgerEntry(
        key=job,
        execution_id=str(e.get("ExecutionId", "")),
        occurrence=occurrence,
        trigger=str(e.get("Trigger", "schedule")),
        status=JobExecutionStatus(e["Status"]),
        message=str(e.get("Message", "")),
        reason=LedgerReason(reason) if reason else None,
        start_time=as_datetime(e.get("StartTime")),
        end_time=as_datetime(e.get("EndTime")),
        retry_count=int(e.get("RetryCount", 0)),
        attempts=int(e.get("Attempts", 0)),
        repeat_count=int(e.get("RepeatCount", 0)),
        entry_id=str(e["RowKey"]).split("|", 1)[-1],
        waited=timedelta(seconds=float(waited)) if isinstance(waited, (int, float)) else None,
        waited_for=WaitCause(waited_for) if waited_for else None,
        dst_shift=_dst_shift(e.get("DstShift")),
    )


def attempts_query(job: JobKey, status: JobExecutionStatus | None) -> tuple[str, dict[str, Any]]:
    """The attempts (and notes) of the job: what 2016-03-01 history lists."""
    query = "PartitionKey eq @pk and RowKey ge @low and RowKey lt @ledger"
    params = {"pk": job_partition(job.collection_key), "low": job_rows(job), "ledger": job_rows(job, PREFIX)}
    if status is not None:
        query += " and Status eq @status"
        params["status"] = status.value
    return query, params


def ledger_query(
    job: JobKey,
    status: JobExecutionStatus | None,
    since: datetime | None,
    until: datetime | None,
    since_inclusive: bool = True,
    until_inclusive: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The ledger rows of the job, optionally of one status and of occurrences in a time range."""
    low, high = PREFIX, END
    if until is not None:  # newer occurrences have lower keys
        low = f"{PREFIX}{_position(until) + (0 if until_inclusive else 1):020d}"
    if since is not None:
        high = f"{PREFIX}{_position(since) + (1 if since_inclusive else 0):020d}"
    query = "PartitionKey eq @pk and RowKey ge @low and RowKey lt @high"
    params: dict[str, Any] = {
        "pk": job_partition(job.collection_key),
        "low": job_rows(job, low),
        "high": job_rows(job, high),
    }
    if status is not None:
        query += " and Status eq @status"
        params["status"] = status.value
    return query, params


def _dst_shift(value: object) -> DstShift | None:
    """A stored DST mark; one this version does not know reads as none (a row is never unreadable for it)."""
    try:
        return DstShift(value) if isinstance(value, str) and value else None
    except ValueError:
        return None
