"""Which jobs carry an expectation ("a success at least every D"): one mirror row each, in the State table.

Contracts:
- One partition (`expectations`) of the primary account's State table, one row per job that carries an
  expectation, keyed like its job. A row mirrors what the check needs (the expectation, the last success,
  the creation time, the state), so one partition query per tick finds every silent job whatever the
  number of jobs, and the jobs table is never scanned.
- The job store writes the row after every insert or replace of such a job (store/jobs.py). The row is a
  hint, not the truth: a failed mirror write is logged and left, and the check (shared/expectations.py)
  confirms a silent job against the job itself, refreshing the row, or forgetting it when the job is gone
  or no longer carries an expectation. So nothing else needs to delete rows.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..keys import JobKey
from ..model import JobState
from ..records import JobRecord
from .keys import job_partition, job_row
from .readable import read_each
from .tables import Entity, Table, as_datetime

log = logging.getLogger(__name__)

_PARTITION = "expectations"


@dataclass(frozen=True)
class Expectation:
    """A job's expectation as mirrored: succeed at least every `within`."""

    job: JobKey
    within: timedelta
    last_success: datetime | None
    created: datetime | None
    state: JobState


def _row(job: JobKey) -> str:
    return f"{job_partition(job.collection_key)}|{job_row(job)}"


class ExpectationIndex:
    def __init__(self, state: Table) -> None:
        self.table = state

    def mirror(self, record: JobRecord) -> None:
        """Write the row of a job that carries an expectation (nothing for one that does not)."""
        within = record.expect_success_within
        if within is None:
            return
        key = record.key
        try:
            self.table.upsert(
                {
                    "PartitionKey": _PARTITION,
                    "RowKey": _row(key),
                    "Subscription": key.subscription,
                    "ResourceGroup": key.resource_group,
                    "Collection": key.collection,
                    "Job": key.job,
                    "WithinSeconds": float(within.total_seconds()),
                    "LastSuccess": record.last_success_time,
                    "Created": record.created_time,
                    "State": record.state.value,
                }
            )
        except Exception:  # the job's own write landed; the check repairs the row (see the module's contract)
            log.warning("the expectation row of %s could not be written", key.resource_id, exc_info=True)

    def forget(self, job: JobKey) -> None:
        self.table.delete(_PARTITION, _row(job))

    def all(self) -> list[Expectation]:
        found = self.table.query("PartitionKey eq @pk", {"pk": _PARTITION})
        return read_each("expectation", found, _expectation)


def _expectation(e: Entity) -> Expectation:
    return Expectation(
        job=JobKey(e["Subscription"], e["ResourceGroup"], e["Collection"], e["Job"]),
        within=timedelta(seconds=float(e["WithinSeconds"])),
        last_success=as_datetime(e.get("LastSuccess")),
        created=as_datetime(e.get("Created")),
        state=JobState(e["State"]),
    )


def of_record(record: JobRecord) -> Expectation | None:
    """The expectation a stored job carries now, or None."""
    if record.expect_success_within is None:
        return None
    return Expectation(
        record.key, record.expect_success_within, record.last_success_time, record.created_time, record.state
    )
