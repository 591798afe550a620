"""Removing jobs: the one purge used by DELETE job, a collection's delete (cascade.py) and retention.

A job goes first, so a queued occurrence finds nothing to run while the rest (due entry, history,
claims) is cleaned up; a job this call removed gives its place in the collection's count back (of two
concurrent deletes exactly one removes it).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from ..keys import JobKey
from ..model import JobCollectionState
from ..records import JobRecord
from ..store import ConcurrencyError, Store
from ..store.dead_letters import DeadLetters
from ..store.readable import UnreadableEntity
from .errors import CollectionNotFound
from .reads import missing_job

if TYPE_CHECKING:
    from ..runtime import Runtime


def purge_job(
    store: Store,
    key: JobKey,
    *,
    due: datetime | None = None,
    etag: str | None = None,
    count: bool = True,
    letters: bool = True,
) -> bool:
    """Remove a job and everything kept for it (its dead letters too). True if this call removed the job.

    `due`: its due-index entry, when known (an entry left behind names a job that no longer exists, so the
    dispatcher drops it as stale). `etag`: remove only the job as read (a job re-created meanwhile is left;
    False). `count`: give the place back to the collection's count (not while the collection itself goes).
    `letters`: remove its dead letters (not while the collection goes: its delete removes them all at once).
    """
    try:
        removed = store.jobs.delete(key, etag)
    except ConcurrencyError:
        return False
    if due is not None:
        store.due.remove(key, due)
    store.history.delete_all(key)
    store.claims.delete_all(key)
    if letters:
        DeadLetters(store.history.table_for(key.collection_key)).delete_all(key.collection_key, key.job)
    if removed and count:
        store.collections.count_removed_job(key.collection_key)
    return removed


def delete_job(rt: Runtime, key: JobKey, *, what_if: bool = False) -> JobRecord | None:
    """DELETE job; JobNotFound when there is none (CollectionNotFound when its collection is missing or
    Deleted). A stored job that cannot be read is removed by key. The job removed (None: the unreadable one);
    with `what_if`, the same checks and answer, and nothing is removed."""
    try:
        record = rt.store.jobs.get(key)
    except UnreadableEntity:
        if not what_if:
            purge_job(rt.store, key)
        return None
    if record is None:
        raise missing_job(rt, key)
    collection = rt.store.collections.get(key.collection_key)
    if collection is None or collection.state == JobCollectionState.DELETED:
        raise CollectionNotFound(key.collection_key)  # its collection's queued purge removes it (cascade.py)
    if not what_if:
        purge_job(rt.store, record.key, due=record.next_execution_time)
    return record
