"""The jobs of a dispatch page, read and advanced many at a time: the dispatcher's job I/O.

- `read_jobs`: each due entry's job, read together with the other jobs of its collection the page holds (a
  query per 14, store/jobs.py `get_many`) rather than a read each; a job whose query failed or whose row could
  not be read in it is read alone.
- `Plan`: one due entry's dispatch, written by the dispatcher; `advance_plans`: their jobs advanced (below), each
  answer kept on its plan.
- `advance_jobs`: each job moved past the occurrence its dispatch queued (`jobstate.advanced`), under its ETag.
  The jobs of one collection are written together (entity-group transactions of up to 100), and those an
  executor's status update changed since the plan's read are read again together and written in a further
  transaction (store/job_updates.py); a job still changing then, or whose transaction failed, goes through
  its own read-modify-write (ADVANCE_ATTEMPTS lost races at most).

Either answers one result per item, in order: the job (as read, or as advanced), None (gone; for an advance,
also a race lost to another write), or the exception that stopped it, so one bad job never stops the others.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from . import jobstate
from .dispatch_report import DispatchOutcome
from .jobstate import DispatchStep
from .keys import CollectionKey, JobKey
from .occurrence import OccurrenceMessage
from .records import HistoryRecord, JobRecord, LedgerEntry
from .store import ConcurrencyError, DueEntry, Store, read_modify_write
from .store.job_updates import update_together
from .store.jobs import groups_of
from .telemetry import occurrence_planned

# Lost ETag races before a job's advance is left to a later tick (which retries it).
ADVANCE_ATTEMPTS = 20

T = TypeVar("T")
R = TypeVar("R")
log = logging.getLogger(__name__)

Planned = tuple[JobRecord, DispatchStep]  # a job as its dispatch read it, and the step it dispatched


class _Replanned(Exception):
    """The job was rewritten (or moved) after it was planned: the dispatch lost the race."""


def side_by_side(pool: Executor | None, fn: Callable[[T], R], items: Iterable[T]) -> list[R | Exception]:
    """fn over items side by side (each costs storage round trips); an item's exception is its result."""

    def guarded(item: T) -> R | Exception:
        try:
            return fn(item)
        except Exception as exc:  # one bad item must not stop the others
            return exc

    return list(pool.map(guarded, items)) if pool is not None else [guarded(item) for item in items]


def read_jobs(store: Store, keys: list[JobKey], pool: Executor | None) -> list[JobRecord | None | Exception]:
    """Every key's job: read together with the other jobs of its collection, or alone."""
    found: dict[JobKey, JobRecord | None] = {}
    groups = groups_of(keys)
    for answer in side_by_side(pool, lambda group: store.jobs.get_many(group[0].collection_key, group), groups):
        if not isinstance(answer, Exception):  # a failed query: its jobs are read one by one below
            found.update(answer)
    rest = list(dict.fromkeys(key for key in keys if key not in found))
    alone = dict(zip(rest, side_by_side(pool, store.jobs.get, rest), strict=True))
    return [found[key] if key in found else alone[key] for key in keys]


@dataclass
class Plan:
    """One due entry's dispatch (dispatcher.py), decided before anything is written."""

    entry: DueEntry
    job: JobRecord
    step: DispatchStep
    messages: list[OccurrenceMessage]  # what the step queues (several for an All missed-run policy's catch-up)
    postponed: HistoryRecord | None = None
    let_go: list[LedgerEntry] = field(default_factory=list)  # ledger entries of missed occurrences not run
    advanced: JobRecord | None = field(default=None)  # the job as its advance left it
    failed: bool = field(default=False)  # a storage fault while advancing: not a race, whatever the write saw
    held_until: datetime | None = None  # its advance waits for the recorder's write of the job's running occurrence

    @property
    def outcome(self) -> DispatchOutcome:
        if self.failed:
            return DispatchOutcome.FAILED
        if self.advanced is None:
            return DispatchOutcome.RACED
        return DispatchOutcome.QUEUED if self.messages else DispatchOutcome.SKIPPED


def advance_plans(
    store: Store, plans: list[Plan], pool: Executor | None, current: list[JobRecord | None | Exception] | None = None
) -> None:
    """Each plan's job advanced past its step (`advance_jobs`; from `current`, the jobs read again, when given),
    its answer kept on the plan and the planned occurrence told to telemetry."""
    answers = advance_jobs(store, [(p.job, p.step) for p in plans], pool, current)
    for plan, advanced in zip(plans, answers, strict=True):
        if isinstance(advanced, Exception):
            plan.failed = True
            log.error("advancing %s failed: %s; a later tick retries it", plan.job.key.resource_id, advanced)
        else:
            plan.advanced = advanced
            if advanced is not None:
                occurrence_planned(
                    plan.job.key,
                    queued=bool(plan.messages),
                    missed=jobstate.missed_count(plan.job, plan.step),
                    state=plan.job.state,
                )


def advance_jobs(
    store: Store,
    planned: list[Planned],
    pool: Executor | None,
    current: list[JobRecord | None | Exception] | None = None,
) -> list[JobRecord | None | Exception]:
    """Every planned job moved past its step: as written, or None when it is gone or another write won.
    `current`: each job as read again since its plan (a read's None or exception is its answer), else as planned."""
    results: dict[int, JobRecord | None | Exception] = {}
    start: dict[int, JobRecord] = {}
    groups: dict[CollectionKey, list[int]] = {}
    for index, (job, _) in enumerate(planned):
        found = job if current is None else current[index]
        if found is None or isinstance(found, Exception):
            results[index] = found
            continue
        start[index] = found
        groups.setdefault(job.key.collection_key, []).append(index)

    def write(group: list[int]) -> dict[int, JobRecord | None]:
        changes = [(start[i], functools.partial(_advanced, planned[i])) for i in group]
        decided: dict[int, JobRecord | None] = {}
        for i, answer in zip(group, update_together(store.jobs, changes), strict=True):
            if isinstance(answer, _Replanned):
                decided[i] = None  # a rewrite re-planned it: the race is lost
            elif not isinstance(answer, BaseException):  # anything else: alone, below
                decided[i] = answer
        return decided

    for written in side_by_side(pool, write, [group for group in groups.values() if len(group) > 1]):
        if not isinstance(written, Exception):  # a failed group: each of its jobs alone, below
            results.update(written)
    rest = [index for index in range(len(planned)) if index not in results]
    for index, answer in zip(
        rest, side_by_side(pool, lambda i: _advance(store, planned[i], start[i]), rest), strict=True
    ):
        results[index] = answer
    return [results[index] for index in range(len(planned))]


def _advance(store: Store, plan: Planned, start: JobRecord) -> JobRecord | None:
    """One job's advance by its own read-modify-write from `start`: the job as written, or None if another write
    won."""
    try:
        # None: deleted meanwhile, a race lost to the delete
        return read_modify_write(
            lambda: store.jobs.get(plan[0].key),
            lambda job: _advanced(plan, job),
            lambda job, _: store.jobs.replace(job),
            attempts=ADVANCE_ATTEMPTS,
            current=start,
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
