"""Retention (daily timer): prune job history and claims, and delete long-finished jobs.

Rules (docs/decisions.md, "Limits and quotas"): a job keeps the last 1,000 history entries or 60 days,
whichever is fewer; Completed and Faulted jobs are deleted 60 days after their last occurrence (their
last execution, or their creation when they never ran), with their history and claims. Claims only
guard against duplicate deliveries, which arrive within minutes, so they are kept for 7 days.

Cost of one run, for J jobs (every request is a single-partition or row-key-range query):
- the jobs table is read once, as a projection of a few columns: ceil(J / 1000) requests;
- per job, one history range query that returns only the entries older than 60 days (about one
  day's worth, since the previous run removed the rest), and one claims query over the job's
  partition, which this pruning keeps at no more than 7 days of attempts;
- per job that has executed at least 1,000 times, one more read of its history keys, at most
  1,000 plus the entries of one day;
- deletions go in batches of 100 per transaction.
So a run costs O(J) requests plus O(what one day added); nothing grows with the age of the
deployment. Jobs are capped by collection quotas (at most 1,000 each), which bounds J per collection.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from .clock import Clock
from .jobstate import expired
from .lifecycle import purge_job
from .store import Store

log = logging.getLogger(__name__)

HISTORY_MAX_ENTRIES = 1000
HISTORY_MAX_AGE = timedelta(days=60)
CLAIM_MAX_AGE = timedelta(days=7)


@dataclass
class RetentionReport:
    jobs: int = 0
    jobs_deleted: int = 0
    history_deleted: int = 0
    claims_deleted: int = 0


class Retention:
    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def run(self) -> RetentionReport:
        """One pass over every job. Idempotent; a failure part-way leaves the rest for the next run."""
        now = self.clock.now()
        report = RetentionReport()
        for job in self.store.jobs.summaries():
            report.jobs += 1
            # The ETag: a job re-created or changed meanwhile is left alone.
            if expired(job, now) and purge_job(self.store, job.key, etag=job.etag):
                report.jobs_deleted += 1
                continue
            report.history_deleted += self.store.history.delete_before(job.key, now - HISTORY_MAX_AGE)
            if job.execution_count >= HISTORY_MAX_ENTRIES:
                # History holds one entry per execution (plus rare Postponed notes), so fewer executions
                # cannot exceed the cap; this skips reading 1,000 keys of every ordinary job.
                report.history_deleted += self.store.history.keep_newest(job.key, HISTORY_MAX_ENTRIES)
            report.claims_deleted += self.store.claims.delete_before(job.key, now - CLAIM_MAX_AGE)
        log.info("retention: %s", report)
        return report
