"""Where a job is written: `store_job` is the one function that stores a job's definition or state, and
`store_moves` its form for a page of one collection's jobs (a collection's cascade), in transactions.

Every write of a definition or a state (PUT, PATCH, enable, disable, collection enable/disable and their
cascade) goes through them; what the record becomes is `jobstate.planned`'s to say, this is its I/O shell.
The dispatcher's advance and the executor's counters write through their own read-modify-writes and never
change a job's definition.

Contract:
- the record carries a new `generation` (jobstate.new_generation), so occurrences queued for the old
  definition are dropped;
- a write whose answer storage lost, or whose storage client's repeat met the row its first try wrote, is
  recognised by reading the row back (`_write_row`): the caller is never told "changed by another request"
  of its own write;
- an Enabled job is planned (jobstate.planned) and has a due-index entry at its `next_execution_time`;
- a Disabled, Completed or Faulted job has no `next_execution_time` and no due-index entry;
- the entry of the replaced record (at `existing.next_execution_time`) is removed, unless the new record is
  due at the same instant (the entry is its own then: the dispatcher matches entries by instant);
- an occurrence before the dispatch horizon is queued now or by a dispatch task sent now (first_dispatch.py): the
  dispatcher's next tick would be late;
- a Disabled job enabled again has ledger entries for the occurrences it had while Disabled (jobstate.resumed).

`store_moves` keeps the same order a page at a time: the entries of all (one transaction per index partition),
the jobs' rows (one per hundred: a cascade of a full collection moved its thousand jobs a read-modify-write each,
for most of a minute beside everyone's occurrences), then the old entries, the ledger, the dispatch. A job
changed since its page was read is left out, for the caller's own read-modify-write.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from ..dispatcher import dispatch_horizon
from ..first_dispatch import dispatch_first
from ..jobstate import planned, resumed
from ..records import JobRecord
from ..store import ConcurrencyError, DueEntry
from ..store.failures import answer_lost
from ..store.job_updates import update_together
from .parallel import side_by_side

if TYPE_CHECKING:
    from ..runtime import Runtime


def store_job(
    rt: Runtime,
    record: JobRecord,
    existing: JobRecord | None,
    now: datetime,
    alongside: Callable[[], None] | None = None,
) -> JobRecord:
    """Plan and store `record` (replacing `existing` under its ETag); the record as stored. ConcurrencyError if
    `existing` changed meanwhile.

    `alongside` (a create's count reservation) runs beside the due entry's write, before the job's; when it
    refuses, nothing else is written and the entry is left to the dispatcher, which drops it as stale once its instant
    has passed (jobstate.awaits_its_write).
    """
    record = planned(record, now)
    first = record.next_execution_time
    old_due = existing.next_execution_time if existing is not None else None

    def add_entry() -> None:
        # The index entry goes before the job: an entry without its job is dropped by the dispatcher as
        # stale, whereas a job without its entry would never run. An unchanged instant keeps its entry
        # (a stored job's next_execution_time always has one), which spares a replace a round trip.
        if first is not None and first != old_due:
            rt.store.due.add(record.key, first, record.generation)

    if alongside is None:
        add_entry()
    else:
        side_by_side(rt.threads, alongside, add_entry)
    record = _write_row(rt, record, existing is None)
    if old_due is not None and old_due != first:
        rt.store.due.remove(record.key, old_due)
    if existing is not None:  # enabled again: the ledger names the occurrences it had while Disabled
        let_go = resumed(existing, record, now)
        if let_go:
            rt.store.history.add_all([], let_go)
    if first is not None and first < dispatch_horizon(now):
        # A lost race leaves the record as written: whoever won re-planned or will dispatch it.
        record = dispatch_first(rt.dispatcher, record, first, now) or record
    return record


def store_moves(rt: Runtime, moves: list[tuple[JobRecord, JobRecord]], now: datetime) -> list[JobRecord]:
    """`store_job` for many jobs of one collection, each `(existing, record)` with `existing` as read under its
    ETag: the existing records of the jobs not written (changed or gone since), for the caller to move alone."""
    plans = [(existing, planned(record, now)) for existing, record in moves]
    rt.store.due.add_many(
        (record.key, record.next_execution_time, record.generation)
        for existing, record in plans
        if record.next_execution_time not in (None, existing.next_execution_time)
    )
    # One round: a job refused (changed since the page's read) is left to the caller, which moves it alone.
    answers = update_together(rt.store.jobs, [(old, partial(_as_planned, new)) for old, new in plans], rounds=1)
    written = [(old, new) for (old, _), new in zip(plans, answers, strict=True) if isinstance(new, JobRecord)]
    left = [old for (old, _), new in zip(plans, answers, strict=True) if not isinstance(new, JobRecord)]
    rt.store.due.remove_entries(
        DueEntry(existing.key, existing.next_execution_time, existing.generation)
        for existing, stored in written
        if existing.next_execution_time not in (None, stored.next_execution_time)
    )
    let_go = [entry for existing, stored in written for entry in resumed(existing, stored, now)]
    if let_go:
        rt.store.history.add_all([], let_go)
    horizon = dispatch_horizon(now)
    due = [(r, at) for _, r in written if (at := r.next_execution_time) is not None and at < horizon]
    rt.dispatcher.dispatch_all(due, now)
    return left


def _as_planned(record: JobRecord, _: JobRecord) -> JobRecord:
    return record


def _write_row(rt: Runtime, record: JobRecord, create: bool) -> JobRecord:
    """The job's row inserted (`create`) or replaced under the ETag `record` carries: the record as stored.

    When storage may have applied the write although it failed (its answer was lost, store/failures.py), or a
    replace met a row changed under it (under lost answers, often the storage client's repeat of this very replace
    finding the row its first try wrote), the row is read again: the write is done when it holds this record (its
    generation is new with every write, so it is this write's or an identical one's). Otherwise the failure
    stands: ConcurrencyError, or the storage error for the API to answer 503. (A create whose answer was lost
    while an identical create of the same second won counts as done too: both keep a place, one too many, the
    safe side of the count, lifecycle/job_count.py.)"""
    try:
        return rt.store.jobs.insert(record) if create else rt.store.jobs.replace(record)
    except Exception as error:
        # A replace's repeat by the storage client meets the row its lost first try wrote (412); a create is not
        # repeated (a POST), so its "exists" is another create's, which must keep its 201 and its place alone.
        if not answer_lost(error) and (create or not isinstance(error, ConcurrencyError)):
            raise
        stored = rt.store.jobs.landed(record)
        if stored is None:
            raise
        return stored
