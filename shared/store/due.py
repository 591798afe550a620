"""The due index: which job is due when, partitioned by the minute it falls in.

A dispatcher tick reads only the partitions (minute buckets) that are due, never the jobs table, so
its cost follows the number of due occurrences, not the number of jobs. The watermark remembers the
last bucket a tick finished, so a tick after an outage knows where to resume.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..keys import JobKey
from .keys import job_partition, job_row
from .tables import ConcurrencyError, Table, as_datetime, as_int, int64

_STATE_PARTITION = "dispatcher"
_WATERMARK_ROW = "watermark"


def bucket_of(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y%m%d%H%M")


def bucket_start(bucket: str) -> datetime:
    return datetime.strptime(bucket, "%Y%m%d%H%M").replace(tzinfo=UTC)


@dataclass(frozen=True)
class DueEntry:
    job: JobKey
    due: datetime
    generation: int


def _row(job: JobKey, due: datetime) -> str:
    return f"{due.astimezone(UTC):%Y%m%dT%H%M%S}|{job_partition(job.collection_key)}|{job_row(job)}"


class DueIndex:
    def __init__(self, table: Table, state: Table) -> None:
        self.table = table
        self.state = state

    def add(self, job: JobKey, due: datetime, generation: int) -> None:
        self.table.upsert({
            "PartitionKey": bucket_of(due), "RowKey": _row(job, due), "Due": due, "Generation": int64(generation),
            "Subscription": job.subscription, "ResourceGroup": job.resource_group,
            "Collection": job.collection, "Job": job.job,
        })

    def remove(self, job: JobKey, due: datetime) -> None:
        self.table.delete(bucket_of(due), _row(job, due))

    def entries(self, bucket: str) -> list[DueEntry]:
        found = []
        for e in self.table.query("PartitionKey eq @pk", {"pk": bucket}):
            key = JobKey(e["Subscription"], e["ResourceGroup"], e["Collection"], e["Job"])
            due = as_datetime(e.get("Due"))
            if due is not None:
                found.append(DueEntry(key, due, as_int(e.get("Generation"))))
        return found

    def watermark(self) -> datetime | None:
        """Start of the last bucket a tick completed; None before the first tick."""
        entity = self.state.get(_STATE_PARTITION, _WATERMARK_ROW)
        return as_datetime(entity.get("Bucket")) if entity else None

    def set_watermark(self, bucket_start_time: datetime) -> None:
        self.state.upsert({"PartitionKey": _STATE_PARTITION, "RowKey": _WATERMARK_ROW, "Bucket": bucket_start_time})

    def init_watermark(self, now: datetime) -> None:
        """Before any job exists, so that no due entry can ever precede the watermark."""
        entity = {"PartitionKey": _STATE_PARTITION, "RowKey": _WATERMARK_ROW,
                  "Bucket": bucket_start(bucket_of(now)) - timedelta(minutes=1)}
        with contextlib.suppress(ConcurrencyError):  # already initialised: the normal case
            self.state.insert(entity)
