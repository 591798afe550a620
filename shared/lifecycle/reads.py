"""Reads of jobs, collections and history: one record, or one page of a list in key order.

Pages are keyset pages (`after`: the row key the previous page ended with) for jobs and collections, and
the store's continuation for history; `skip` positions a first page by reading keys only. A stored item
that cannot be read is left out of a page (logged by the store); reading it alone raises UnreadableEntity.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..keys import CollectionKey, JobKey
from ..model import JobCollectionState, JobExecutionStatus, JobState
from ..records import CollectionRecord, HistoryRecord, JobRecord, LedgerEntry
from .errors import CollectionNotFound, JobNotFound, LifecycleError
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


def missing_job(rt: Runtime, key: JobKey) -> LifecycleError:
    """What to refuse a request for a job that is not stored: CollectionNotFound when its collection is missing
    or being deleted too (the collection is answered first, as ARM resolves the parent), else JobNotFound."""
    collection = rt.store.collections.get(key.collection_key)
    if collection is None or collection.state == JobCollectionState.DELETED:
        return CollectionNotFound(key.collection_key)
    return JobNotFound(key)


def get_job(rt: Runtime, key: JobKey) -> JobRecord:
    """The job; CollectionNotFound when its collection is missing or Deleted (its jobs are purged after the
    delete answered, and read as if they were gone), else JobNotFound when it is missing. The two rows are read
    side by side."""
    collection, record = side_by_side(
        rt.threads, lambda: rt.store.collections.get(key.collection_key), lambda: rt.store.jobs.get(key)
    )
    if collection is None or collection.state == JobCollectionState.DELETED:
        raise CollectionNotFound(key.collection_key)
    if record is None:
        raise JobNotFound(key)
    return record


def collections_page(
    rt: Runtime,
    subscription: str,
    group: str | None,
    size: int,
    after: str | None,
    skip: int,
    visible: Callable[[CollectionKey], bool] | None = None,
) -> tuple[list[CollectionRecord], str | None]:
    """A page of a subscription's (or one resource group's) collections, and the cursor of the next; only
    those `visible` accepts (the caller may read) when given, which `skip` counts too."""
    if after is None and skip:
        after, exhausted = rt.store.collections.skip(subscription, group, skip, visible)
        if exhausted:
            return [], None
    return rt.store.collections.page_after(subscription, group, size, after, visible)


def jobs_page(
    rt: Runtime, key: CollectionKey, state: JobState | None, size: int, after: str | None, skip: int
) -> tuple[list[JobRecord], str | None]:
    """A page of a live collection's jobs (optionally in one state), and the cursor of the next."""
    live_collection(rt, key)
    if after is None and skip:
        after, exhausted = rt.store.jobs.skip(key, state, skip)
        if exhausted:
            return [], None
    return rt.store.jobs.page_after(key, state, size, after)


def history_page(
    rt: Runtime, key: JobKey, status: JobExecutionStatus | None, size: int, continuation: Any, skip: int
) -> tuple[list[HistoryRecord], Any]:
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


def ledger_page(
    rt: Runtime,
    key: JobKey,
    status: JobExecutionStatus | None,
    since: datetime | None,
    until: datetime | None,
    size: int,
    continuation: Any,
    skip: int,
    *,
    since_inclusive: bool = True,
    until_inclusive: bool = True,
) -> tuple[list[LedgerEntry], Any]:
    """A page of the job's occurrence ledger, newest first, and the continuation of the next (like history)."""
    get_job(rt, key)

    def read(count: int, token: Any) -> tuple[list[LedgerEntry], Any]:
        return rt.store.history.ledger_page(
            key, status, since, until, count, token, since_inclusive=since_inclusive, until_inclusive=until_inclusive
        )

    if continuation is None and skip:
        while skip > 0:
            entries, continuation = read(min(skip, 1000), continuation)
            skip -= len(entries)
            if continuation is None:
                return [], None
    return read(size, continuation)
