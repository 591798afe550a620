"""Claims: how one attempt of one occurrence runs once although the queue may deliver it twice.

The first delivery inserts the claim and runs; a concurrent duplicate finds it and stops. A claim
left `running` past its lease belongs to a worker that died mid-attempt: the next delivery takes it
over (ETag-guarded, so only one worker can), which keeps delivery at-least-once without running an
attempt twice while its first runner is alive.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..keys import JobKey
from .history import delete_rows
from .keys import job_scope
from .tables import ConcurrencyError, Table, as_datetime

LEASE = timedelta(minutes=3)  # longer than the 60 s action timeout plus bookkeeping


@dataclass
class Claim:
    job: JobKey
    claim_id: str
    etag: str
    # True when an expired lease was taken over: the first runner may have finished the attempt and
    # died before the claim said so; the job's recent claims tell (see Executor.run).
    taken_over: bool = False


class ClaimStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def try_claim(self, job: JobKey, claim_id: str, now: datetime) -> Claim | None:
        """The claim if this caller may run the attempt now; None if it ran or is running elsewhere."""
        entity = {"PartitionKey": job_scope(job), "RowKey": claim_id, "Status": "running", "LeaseUntil": now + LEASE}
        try:
            return Claim(job, claim_id, self.table.insert(entity))
        except ConcurrencyError:
            pass
        existing = self.table.get(job_scope(job), claim_id)
        if existing is None or existing.get("Status") == "done":
            return None
        lease = as_datetime(existing.get("LeaseUntil"))
        if lease is not None and lease > now:
            return None
        try:
            return Claim(job, claim_id, self.table.replace(entity, existing["etag"]), taken_over=True)
        except ConcurrencyError:
            return None

    def complete(self, claim: Claim) -> None:
        """Mark an attempt that changed no job as done. An attempt that updates its job is marked done
        by that update (JobRecord.recent_claims), which saves a round trip per execution."""
        entity = {"PartitionKey": job_scope(claim.job), "RowKey": claim.claim_id, "Status": "done"}
        self.table.upsert(entity)

    def release(self, claim: Claim) -> None:
        """Give the attempt back after a failure of ours, so the queue's redelivery can claim it at once.

        ETag-guarded: a claim another worker has since taken over is left alone.
        """
        with contextlib.suppress(ConcurrencyError):
            self.table.delete(job_scope(claim.job), claim.claim_id, claim.etag)

    def delete_before(self, job: JobKey, cutoff: datetime) -> int:
        """Delete the job's claims last written before `cutoff`; returns how many.

        A claim only has to outlive the duplicates of its message, which arrive within minutes (a
        redelivery, a re-dispatch), so old claims are dead weight. The filter on the system Timestamp
        is evaluated by the service over the job's partition, which retention keeps small.
        """
        query = "PartitionKey eq @pk and Timestamp lt @cutoff"
        found = self.table.query(query, {"pk": job_scope(job), "cutoff": cutoff}, select=["RowKey"])
        return delete_rows(self.table, job_scope(job), [e["RowKey"] for e in found])

    def delete_all(self, job: JobKey) -> None:
        self.table.delete_partition(job_scope(job))
