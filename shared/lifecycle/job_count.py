"""The collection's job counter: how creates keep `maxJobCount` exact under any concurrency.

A create reserves a place before it stores the job: it increments the collection's `job_count` under
the collection's ETag, so of two creates racing for the last place exactly one wins (the other re-reads,
sees the collection full, and gets the 409). The creates of one process share those writes (group commit:
one write counts the places of every create that came while the one before was in flight, granted in the
order they came and refused past the maximum), so they do not race each other. A create whose job write
then fails gives its place back; a delete that removed the job (exactly one of two concurrent deletes does)
gives one back too. The cost of a create is at most one extra entity write, whatever the number of jobs:
nothing is counted by reading jobs, except once for a collection stored before the counter existed.

The one gap: a process that dies between the reservation and the job write leaves the count one too
high, which can refuse a create early but never lets a collection exceed its quota.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..keys import CollectionKey
from ..model import JobCollectionState
from ..records import CollectionRecord
from ..store import ConcurrencyError, read_modify_write
from ..store.tables import backoff
from .errors import CollectionNotFound, Conflict
from .quotas import check_job_count, limits_of

if TYPE_CHECKING:
    from ..runtime import Runtime

# The processes racing for one collection's count retry their increment; each round trip lets one of them through,
# so this bounds the wait of a create among that many (a slow retry is still not a wrong answer).
RESERVE_ATTEMPTS = 200
_ANY_COUNT = 1 << 30


def reserve_job(rt: Runtime, collection: CollectionRecord) -> None:
    """Count one more job in the collection; QuotaExceeded when it holds its maximum already. The creates of this
    process for one collection share the counter's writes (shared/group_commit.py): one write counts all the
    places it can grant, in the order the creates came."""
    place, (count, granted, read) = rt.job_counts.share(collection.key, lambda n: _reserve(rt, collection, n))
    if place >= granted:
        # Full: the places there were went to the creates that came before this one.
        check_job_count(limits_of(read.definition), count)
        raise AssertionError("a create refused a place while the count had room")  # check_job_count raised


def _reserve(rt: Runtime, collection: CollectionRecord, wanted: int) -> tuple[int, int, CollectionRecord]:
    """Up to `wanted` more places in the collection's count, under its ETag: (the count after, the places
    granted, the collection as read)."""
    key = collection.key
    outcome = (0, 0, collection)

    def more(record: CollectionRecord) -> CollectionRecord | None:
        nonlocal outcome
        if record.state == JobCollectionState.DELETED:
            raise CollectionNotFound(key)
        current = record.job_count
        if current is None:
            current = rt.store.jobs.count_up_to(key, _ANY_COUNT)
        granted = min(wanted, max(limits_of(record.definition).max_jobs - current, 0))
        outcome = (current + granted, granted, record)
        if granted == 0 and record.job_count is not None:
            return None  # full: nothing to write
        return replace(record, job_count=current + granted)

    try:
        found = read_modify_write(
            lambda: rt.store.collections.get(key),
            more,
            lambda new, _: rt.store.collections.replace(new),
            attempts=RESERVE_ATTEMPTS,
            current=collection,
            pause=backoff(0.002),  # spreads the racers of other processes, so each round lets one through
        )
    except ConcurrencyError as exc:
        raise Conflict("The job collection was changed by too many requests at once; retry.") from exc
    if found is None:
        raise CollectionNotFound(key)
    return outcome


def release_job(rt: Runtime, key: CollectionKey) -> None:
    """Give back a place: the job reserved for was not stored, or was deleted."""
    rt.store.collections.count_removed_job(key)
