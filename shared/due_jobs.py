"""The jobs of a dispatch page, read and advanced many at a time: the dispatcher's job I/O.

- `read_jobs`: each due entry's job, read together with the other jobs of its collection the page holds (a
  query per 14, store/jobs.py `get_many`) rather than a read each; a job whose query failed or whose row could
  not be read in it is read alone.
- `advance_jobs`: each job moved past the occurrence its dispatch queued (`jobstate.advanced`), under its ETag.
  The jobs of one collection are read again together right before their write and written together
  (entity-group transactions of up to 100, store/tables.py `replace_batch`), so the executors' status updates
  landed since the plan's read rarely spoil a transaction; a job that changed in between, or whose
  transaction failed, goes through its own read-modify-write (ADVANCE_ATTEMPTS lost races at most).

Either answers one result per item, in order: the job (as read, or as advanced), None (gone; for an advance,
also a race lost to another write), or the exception that stopped it, so one bad job never stops the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from . import jobstate
from .jobstate import DispatchStep
from .keys import CollectionKey, JobKey
from .records import JobRecord
from .store import ConcurrencyError, Store, read_modify_write
from .store.jobs import groups_of
from .store.tables import chunks

# Lost ETag races before a job's advance is left to a later tick (which retries it).
ADVANCE_ATTEMPTS = 20
TRANSACTION = 100  # jobs in one entity-group transaction at most

T = TypeVar("T")
R = TypeVar("R")
Planned = tuple[JobRecord, DispatchStep]  # a job as its dispatch read it, and the step it dispatched


class _Replanned(Exception):
    """The job was rewritten (or moved) after it was planned: the dispatch lost the race."""


def side_by_side(pool: ThreadPoolExecutor | None, fn: Callable[[T], R], items: Iterable[T]) -> list[R | Exception]:
    """fn over items side by side (each costs storage round trips); an item's exception is its result."""

    def guarded(item: T) -> R | Exception:
        try:
            return fn(item)
        except Exception as exc:  # one bad item must not stop the others
            return exc

    return list(pool.map(guarded, items)) if pool is not None else [guarded(item) for item in items]


def read_jobs(store: Store, keys: list[JobKey], pool: ThreadPoolExecutor | None) -> list[JobRecord | None | Exception]:
    """Every key's job: read together with the other jobs of its collection, or alone."""
    found: dict[JobKey, JobRecord | None] = {}
    groups = groups_of(keys)
    for answer in side_by_side(pool, lambda group: store.jobs.get_many(group[0].collection_key, group), groups):
        if not isinstance(answer, Exception):  # a failed query: its jobs are read one by one below
            found.update(answer)
    rest = list(dict.fromkeys(key for key in keys if key not in found))
    alone = dict(zip(rest, side_by_side(pool, store.jobs.get, rest), strict=True))
    return [found[key] if key in found else alone[key] for key in keys]


def advance_jobs(
    store: Store, planned: list[Planned], pool: ThreadPoolExecutor | None
) -> list[JobRecord | None | Exception]:
    """Every planned job moved past its step: as written, or None when it is gone or another write won."""
    results: dict[int, JobRecord | None | Exception] = {}
    groups: dict[CollectionKey, list[int]] = {}
    for index, (job, _) in enumerate(planned):
        groups.setdefault(job.key.collection_key, []).append(index)
    together = [chunk for group in groups.values() if len(group) > 1 for chunk in chunks(group, TRANSACTION)]

    def write(chunk: list[int]) -> dict[int, JobRecord | None]:
        fresh = store.jobs.get_many(planned[chunk[0]][0].key.collection_key, [planned[i][0].key for i in chunk])
        decided: dict[int, JobRecord | None] = {}
        writes: list[tuple[int, JobRecord]] = []
        for i in chunk:
            key = planned[i][0].key
            if key not in fresh:
                continue  # unreadable: alone, below
            current = fresh[key]
            try:
                updated = _advanced(planned[i], current) if current is not None else None
            except _Replanned:
                decided[i] = None
                continue
            if current is None or updated is None:
                decided[i] = current  # gone (a race lost to the delete), or already advanced by our write
            else:
                writes.append((i, updated))
        for (i, _), record in zip(writes, store.jobs.replace_many([u for _, u in writes]), strict=True):
            if record is not None:
                decided[i] = record
        return decided

    for written in side_by_side(pool, write, together):
        if not isinstance(written, Exception):  # a failed chunk: each of its jobs alone, below
            results.update(written)
    rest = [index for index in range(len(planned)) if index not in results]
    for index, answer in zip(rest, side_by_side(pool, lambda i: _advance(store, planned[i]), rest), strict=True):
        results[index] = answer
    return [results[index] for index in range(len(planned))]


def _advance(store: Store, plan: Planned) -> JobRecord | None:
    """One job's advance by its own read-modify-write: the job as written, or None if another write won."""
    try:
        # None: deleted meanwhile, a race lost to the delete
        return read_modify_write(
            lambda: store.jobs.get(plan[0].key),
            lambda job: _advanced(plan, job),
            lambda job, _: store.jobs.replace(job),
            attempts=ADVANCE_ATTEMPTS,
            current=plan[0],
        )
    except (_Replanned, ConcurrencyError):
        return None  # lost to another write (ConcurrencyError: every one of ADVANCE_ATTEMPTS)


def _advanced(plan: Planned, job: JobRecord) -> JobRecord | None:
    """The job moved past the plan's occurrence; None when it already is (our write landed, but its answer was
    lost and the SDK's retry saw our new ETag). Raises _Replanned when a rewrite re-planned it since the plan."""
    planned, step = plan
    if job is not planned and jobstate.has_advanced(job, planned.generation, step):
        return None
    # The executor updates counters on the same entity: when the job was read again, advance only if it is
    # still the one we planned for (a PUT/PATCH re-plans it by itself).
    if job is not planned and not jobstate.still_due(job, planned.generation, step.due):
        raise _Replanned
    return jobstate.advanced(job, step)
