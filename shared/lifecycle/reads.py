"""Reads of jobs, collections and history: one record, or one page of a list in key order.

Pages are keyset pages (`after`: the row key the previous page ended with) for jobs and collections, and
the store's continuation for history; `skip` positions a first page by reading keys only. A stored item
that cannot be read is left out of a page (logged by the store); reading it alone raises UnreadableEntity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..keys import CollectionKey, JobKey
from ..model import JobCollectionState, JobExecutionStatus, JobState
from ..records import CollectionRecord, HistoryRecord, JobRecord
from .errors import CollectionNotFound, JobNotFound
from .parallel import side_by_side

if TYPE_CHECKING:
    from ..runtime import Runtime


def get_collection(rt: Runtime, key: CollectionKey) -> CollectionRecord:
    """The collection; CollectionNotFound when it is missing or Deleted (its delete finishing after the answer)."""
    return live_collection(rt, key)


def live_collection(rt: Runtime, key: CollectionKey) -> CollectionRecord:
    """The collection jobs may be written to; CollectionNotFound when it is missing or being deleted."""
    record = rt.store.collections.get(key)
    if record is None or record.state == JobCollectionState.DELETED:
        raise CollectionNotFound(key)
    return record


def get_job(rt: Runtime, key: JobKey) -> JobRecord:
    """The job; JobNotFound when it is missing or its collection is gone or Deleted (its jobs are purged after
    the delete answered, and read as if they were). The two rows are read side by side."""
    collection, record = side_by_side(lambda: rt.store.collections.get(key.collection_key),
                                      lambda: rt.store.jobs.get(key))
    if record is None or collection is None or collection.state == JobCollectionState.DELETED:
        raise JobNotFound(key)
    return record


def collections_page(rt: Runtime, subscription: str, group: str | None, size: int, after: str | None,
                     skip: int) -> tuple[list[CollectionRecord], str | None]:
    """A page of a subscription's (or one resource group's) collections, and the cursor of the next."""
    if after is None and skip:
        after, exhausted = rt.store.collections.skip(subscription, group, skip)
        if exhausted:
            return [], None
    return rt.store.collections.page_after(subscription, group, size, after)


def jobs_page(rt: Runtime, key: CollectionKey, state: JobState | None, size: int, after: str | None,
              skip: int) -> tuple[list[JobRecord], str | None]:
    """A page of a live collection's jobs (optionally in one state), and the cursor of the next."""
    live_collection(rt, key)
    if after is None and skip:
        after, exhausted = rt.store.jobs.skip(key, state, skip)
        if exhausted:
            return [], None
    return rt.store.jobs.page_after(key, state, size, after)


def history_page(rt: Runtime, key: JobKey, status: JobExecutionStatus | None, size: int, continuation: Any,
                 skip: int) -> tuple[list[HistoryRecord], Any]:
    """A page of the job's history, newest first, and the continuation of the next. History partitions are
    small (1,000 entries per job at most), so `skip` simply reads past the skipped entries once."""
    get_job(rt, key)
    if continuation is None and skip:
        while skip > 0:
            records, continuation = rt.store.history.page(key, status, min(skip, 1000), continuation)
            skip -= len(records)
            if continuation is None:
                return [], None  # nothing follows the skipped entries
    return rt.store.history.page(key, status, size, continuation)
