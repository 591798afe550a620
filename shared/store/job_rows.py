"""A job's row in the jobs table: its columns to and from a `JobRecord` (the definition's `Document` and sealed
`Sealed` columns are the job store's, jobs.py, which seals and parses them), and the projection housekeeping reads
of every job (`JobSummary`). One partition per collection (keys.py `job_partition`), one row per job (`job_row`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..keys import JobKey
from ..model import JobProperties, JobState, format_utc
from ..records import JobRecord
from .keys import job_partition, job_row
from .overlap import decode as decode_overlap
from .overlap import encode as encode_overlap
from .tables import Entity, as_datetime, as_int, int64


@dataclass(frozen=True)
class JobSummary:
    """The few columns housekeeping reads of every job."""

    key: JobKey
    state: JobState
    created_time: datetime | None
    last_execution_time: datetime | None
    execution_count: int
    etag: str


def summary_of(e: Entity) -> JobSummary:
    return JobSummary(
        key=JobKey(e["Subscription"], e["ResourceGroup"], e["Collection"], e["Name"]),
        state=JobState(e["State"]),
        created_time=as_datetime(e.get("CreatedTime")),
        last_execution_time=as_datetime(e.get("LastExecutionTime")),
        execution_count=int(e.get("ExecutionCount") or 0),
        etag=str(e["etag"]),
    )


SUMMARY_COLUMNS = [
    "Subscription",
    "ResourceGroup",
    "Collection",
    "Name",
    "State",
    "CreatedTime",
    "LastExecutionTime",
    "ExecutionCount",
]


def row_of(record: JobRecord) -> Entity:
    key = record.key
    return {
        "PartitionKey": job_partition(key.collection_key),
        "RowKey": job_row(key),
        "Subscription": key.subscription,
        "ResourceGroup": key.resource_group,
        "Collection": key.collection,
        "Name": key.job,
        "Document": None,  # set by JobStore._entity (jobs.py), with the secrets sealed apart
        "State": record.state.value,
        "CreatedTime": record.created_time,
        # As text: an anchor may be an endTime long past, and a table's DateTime starts at 1601.
        "Anchor": format_utc(record.anchor) if record.anchor is not None else None,
        "CountOrigin": record.count_origin,
        "NextExecutionTime": record.next_execution_time,
        "DispatchedOccurrence": record.dispatched_occurrence,
        "LastExecutionTime": record.last_execution_time,
        "LastSuccessTime": record.last_success_time,
        "ExecutionCount": record.execution_count,
        "FailureCount": record.failure_count,
        "FaultedCount": record.faulted_count,
        "Generation": int64(record.generation),
        "RecentClaims": " ".join(record.recent_claims) or None,
        "PausedSince": record.paused_since,
        "PausedBy": record.paused_by,
        "Overlap": encode_overlap(record.overlap),  # overlap.py: what runs and waits (None: nothing)
    }


def bound_to(entity: Entity) -> str:
    return f"{entity['PartitionKey']}\n{entity['RowKey']}"


def record_of(entity: Entity, properties: JobProperties) -> JobRecord:
    return JobRecord(
        key=JobKey(entity["Subscription"], entity["ResourceGroup"], entity["Collection"], entity["Name"]),
        properties=properties,
        state=JobState(entity["State"]),
        created_time=as_datetime(entity.get("CreatedTime")),
        anchor=datetime.fromisoformat(entity["Anchor"]) if entity.get("Anchor") else None,
        count_origin=as_datetime(entity.get("CountOrigin")),
        next_execution_time=as_datetime(entity.get("NextExecutionTime")),
        dispatched_occurrence=as_datetime(entity.get("DispatchedOccurrence")),
        last_execution_time=as_datetime(entity.get("LastExecutionTime")),
        last_success_time=as_datetime(entity.get("LastSuccessTime")),
        execution_count=int(entity.get("ExecutionCount", 0)),
        failure_count=int(entity.get("FailureCount", 0)),
        faulted_count=int(entity.get("FaultedCount", 0)),
        generation=as_int(entity.get("Generation")),
        recent_claims=tuple((entity.get("RecentClaims") or "").split()),
        paused_since=as_datetime(entity.get("PausedSince")),
        paused_by=entity.get("PausedBy"),
        overlap=decode_overlap(entity.get("Overlap")),
        etag=entity.get("etag"),
    )
