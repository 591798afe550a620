"""The lifecycle of jobs and collections: the writes of definitions and states, between the API and the store.

request -> API (HTTP only: parse, call here, render, map errors) -> lifecycle -> store. What a job record
becomes is shared/jobstate's to say; the lifecycle is its I/O shell for writes (as the dispatcher is for
advances and the executor for attempts). Retention's deletes come here too (`purge_job`).

- reads.py: one record, or one page of a list.
- jobs.py: job definition writes (PUT, PATCH): validate, merge, quota, then store.
- collections.py: collection definition writes (PUT, PATCH); a state change queues its cascade.
- writes.py: `store_job`, the one place a job's definition or state is stored (planned, due-indexed).
- states.py: state changes of jobs and collections under ETags.
- cascade.py: POST enable/disable and DELETE of a collection, and what follows for its jobs: queued work,
  done after the answer (`run_task`, which the dispatch queue's trigger, shared/dispatch_trigger.py, calls).
- purge.py: removing a job (DELETE, a collection's delete, retention).
- runs.py: run now; backfill.py: the occurrences of a past interval, again.
- job_count.py, quotas.py: maxJobCount under concurrency; plan and quota limits.
- documents.py, validation.py, certificates.py, regions.py: definition documents and the rules they obey.
- errors.py: what the lifecycle refuses (JobNotFound(key), CollectionNotFound(key), QuotaExceeded,
  InvalidDefinition(path), Conflict); the API maps them to ARM errors, nothing here knows HTTP.
"""

from __future__ import annotations

from .backfill import Backfilled, backfill_job
from .cascade import delete_collection, transition_collection
from .collections import patch_collection, put_collection
from .errors import (
    CollectionNotFound,
    Conflict,
    InvalidDefinition,
    JobNotFound,
    LifecycleError,
    QuotaExceeded,
)
from .jobs import patch_job, put_job
from .purge import delete_job, purge_job
from .reads import (
    collections_page,
    get_collection,
    get_job,
    history_page,
    jobs_page,
    ledger_page,
    live_collection,
)
from .runs import run_job

__all__ = [
    "Backfilled",
    "backfill_job",
    "CollectionNotFound",
    "Conflict",
    "InvalidDefinition",
    "JobNotFound",
    "LifecycleError",
    "QuotaExceeded",
    "collections_page",
    "delete_collection",
    "delete_job",
    "get_collection",
    "get_job",
    "history_page",
    "jobs_page",
    "ledger_page",
    "live_collection",
    "patch_collection",
    "patch_job",
    "purge_job",
    "put_collection",
    "put_job",
    "run_job",
    "transition_collection",
]
