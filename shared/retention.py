"""Retention (daily timer): prune job history and claims, and delete long-finished jobs.

Rules (docs/decisions.md, "Limits and quotas" and "Missed runs, backfill, the ledger"): a job keeps, of its
attempts and apart of its occurrence ledger, the newest `maxEntriesPerJob` entries, none older than `maxAge`,
except failed ones, kept until `failureMaxAge`: its collection's `historyRetention` (newer api-version),
by default the old service's last 1,000 entries or 60 days, whichever is fewer. Completed and Faulted jobs are
deleted 60 days after their last occurrence (their last execution, or their creation when they never ran),
with their history and claims. Claims only guard against duplicate deliveries, which arrive within minutes,
so they are kept for 7 days. A collection's dead letters (store/dead_letters.py) are failures: each is kept
until `failureMaxAge` after its latest run ended (one query per collection that has jobs, once a day).

Cost of one run, for J jobs (every request is a single-partition query or a transaction):
- the jobs table is read once, as a projection of a few columns: ceil(J / 1000) requests; each collection once;
- per job, one read of its history rows' keys and statuses (ceil(rows / 1000) requests, the rows being
  bounded by the retention itself plus what a day added: at most about 2,000 plus a day), one claims
  query over the job's rows, which this pruning keeps at no more than 7 days of attempts, and one query for
  history rows of the layout before (store/history.py `adopt_legacy`), moved when there are any;
- deletions go in batches of 100 per transaction.
So a run costs O(J) requests plus O(what one day added); nothing grows with the age of the deployment.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from .clock import Clock
from .jobstate import expired
from .keys import CollectionKey
from .lifecycle import purge_job
from .model.extensions import DEFAULT_RETENTION, HistoryRetention
from .store import Store
from .store.dead_letters import DeadLetters

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
    dead_letters_deleted: int = 0


class Retention:
    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def run(self) -> RetentionReport:
        """One pass over every job. Idempotent; a failure part-way leaves the rest for the next run."""
        now = self.clock.now()
        report = RetentionReport()
        retentions: dict[CollectionKey, HistoryRetention] = {}
        for job in self.store.jobs.summaries():
            report.jobs += 1
            # The ETag: a job re-created or changed meanwhile is left alone.
            if expired(job, now) and purge_job(self.store, job.key, etag=job.etag):
                report.jobs_deleted += 1
                continue
            retention = retentions.get(job.key.collection_key)
            if retention is None:
                retention = retentions[job.key.collection_key] = self._retention_of(job.key.collection_key)
            self.store.history.adopt_legacy(job.key)  # rows of the layout before, if any (store/history.py)
            report.history_deleted += self.store.history.prune(job.key, retention, now)
            report.claims_deleted += self.store.claims.delete_before(job.key, now - CLAIM_MAX_AGE)
        for key, kept in retentions.items():
            letters = DeadLetters(self.store.history.table_for(key))
            report.dead_letters_deleted += letters.prune(key, kept.effective_failure_max_age, now)
        log.info("retention: %s", report)
        return report

    def _retention_of(self, key: CollectionKey) -> HistoryRetention:
        collection = self.store.collections.get(key)
        properties = collection.definition.properties if collection is not None else None
        return (properties.history_retention if properties is not None else None) or DEFAULT_RETENTION
