"""The dispatcher: turn due-index entries into queued occurrences, fanned out over instances.

Once a minute the timer (`fan_out`) enqueues one dispatch task per (minute bucket, shard) from its
watermark up to its horizon, one whole minute ahead of the current one; the queue-triggered
`handle_task` dispatches one such partition on whichever instance takes it. Per entry: enqueue the
occurrence (visible at its due second), index the job's following occurrence, advance the job under
its ETag, delete the entry. Working a minute ahead means a dispatch's own duration never makes an
occurrence late. Each step is done for a page of entries at once (index writes batched per
partition), and every step comes before the ones that depend on it, so a crash anywhere duplicates
rather than loses: the entries stay, a later task re-reads them, and the executor's claim drops the
duplicate occurrence. A task is idempotent; the timer re-sends the last buckets (OVERLAP) and sweeps
older buckets for leftovers, so a task lost or failed is done again by a later tick.

What the job becomes at each step (the occurrence to queue, a missed run, the advance) is shared/jobstate's
to say (`dispatch_step`, `advanced`); the dispatcher is its I/O shell.

`tick` does a whole tick in this process (tests, tools). A writer (the lifecycle) calls `dispatch` directly
for an occurrence before the horizon, so a job created seconds ahead runs on time although nothing
polls faster than the minute timer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import TypeVar

from . import jobstate
from .clock import Clock
from .jobstate import DispatchStep
from .keys import CollectionKey, JobKey
from .occurrence import OccurrenceMessage, Trigger, batches
from .records import HistoryRecord, JobRecord
from .store import ConcurrencyError, DueEntry, Store, bucket_of, bucket_start, read_modify_write
from .store.dispatch_queue import MalformedTask, ShardTask
from .store.jobs import groups_of
from .store.tables import chunks
from .telemetry import traced_dispatch, traced_tick

log = logging.getLogger(__name__)
# Lost ETag races before a job's advance is left to a later tick (which retries it).
ADVANCE_ATTEMPTS = 20


class _Replanned(Exception):
    """The job was rewritten (or moved) after it was planned: the dispatch lost the race."""

TICK = timedelta(minutes=1)
# Buckets re-read behind the watermark: an API write racing a tick may land in a bucket just processed.
OVERLAP = timedelta(minutes=2)
# Buckets read by one tick at most, so recovery from a long outage spreads over several ticks.
MAX_BUCKETS_PER_TICK = 720
PARALLELISM = 16
PAGE = 500  # entries dispatched step by step together: bounds memory and the work a crash repeats

T = TypeVar("T")
R = TypeVar("R")


class DispatchOutcome(str, Enum):
    """What became of one due entry in a dispatch."""

    QUEUED = "queued"  # its occurrence is queued and the job advanced past it
    SKIPPED = "skipped"  # the job is not Enabled: advanced past it, nothing queued
    STALE = "stale"  # the entry no longer matches its job (moved on, redefined, deleted): dropped
    # Another write to the job won the ETag race to advance it (a PUT, PATCH, state change or delete
    # re-planned it, or writes kept winning ADVANCE_ATTEMPTS times): the entry stays for a later tick.
    RACED = "raced"
    FAILED = "failed"  # a storage fault: the entry stays, a later tick dispatches it again


@dataclass
class TickReport:
    buckets: int = 0
    tasks: int = 0
    enqueued: int = 0  # DispatchOutcome.QUEUED
    skipped: int = 0
    stale: int = 0
    raced: int = 0
    failed: int = 0

    def count(self, outcome: DispatchOutcome, n: int = 1) -> None:
        field_name = "enqueued" if outcome == DispatchOutcome.QUEUED else outcome.value
        setattr(self, field_name, getattr(self, field_name) + n)

    def add(self, other: TickReport) -> None:
        for outcome in DispatchOutcome:
            self.count(outcome, other.of(outcome))

    def of(self, outcome: DispatchOutcome) -> int:
        return int(getattr(self, "enqueued" if outcome == DispatchOutcome.QUEUED else outcome.value))


@dataclass
class _Plan:
    """One due entry's dispatch, decided before anything is written."""

    entry: DueEntry
    job: JobRecord
    step: DispatchStep
    message: OccurrenceMessage | None
    postponed: HistoryRecord | None = None
    advanced: JobRecord | None = field(default=None)  # the job as its advance left it
    failed: bool = field(default=False)  # a storage fault while advancing: not a race, whatever the write saw

    @property
    def outcome(self) -> DispatchOutcome:
        if self.failed:
            return DispatchOutcome.FAILED
        if self.advanced is None:
            return DispatchOutcome.RACED
        return DispatchOutcome.QUEUED if self.message is not None else DispatchOutcome.SKIPPED


def dispatch_horizon(now: datetime) -> datetime:
    """Occurrences before this instant are queued already, or must be queued by whoever plans them now:
    the tick running now covers them, and the next tick starts after it."""
    return bucket_start(bucket_of(now)) + 2 * TICK


class Dispatcher:
    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    # -- the timer: decide the tasks ------------------------------------------------------------------

    def _window(self, now: datetime) -> tuple[list[ShardTask], datetime, int, int]:
        """The tasks of a tick (every shard of every bucket from the watermark's overlap to the horizon,
        plus partitions older than that still holding entries), the last bucket and the shard count."""
        last = dispatch_horizon(now) - TICK  # the last bucket before the horizon
        watermark, shards = self.store.due.progress()
        watermark = watermark or last - TICK
        first = max(watermark - OVERLAP, last - MAX_BUCKETS_PER_TICK * TICK)
        buckets = []
        current = first
        while current <= last:
            buckets.append(bucket_of(current))
            current += TICK
        accounts = range(self.store.due.accounts)  # each storage account's due index is read apart
        tasks = [ShardTask(b, s, account=a) for a in accounts
                 for b, s in sorted(self.store.due.in_account(a).leftovers_before(bucket_of(first)))]
        tasks += [ShardTask(b, s, account=a) for b in buckets for a in accounts for s in range(shards)]
        return tasks, last, shards, len(buckets)

    @traced_tick
    def fan_out(self) -> TickReport:
        """The minute timer: one dispatch task per (bucket, shard) onto the dispatch queue; then the
        watermark moves. A timer that dies part-way leaves the watermark, so the next one re-sends all."""
        tasks, last, shards, buckets = self._window(self.clock.now())
        for task in tasks:
            self.store.dispatch.send(task)
        self.store.due.set_watermark(last, shards)
        return TickReport(buckets=buckets, tasks=len(tasks))

    @traced_tick
    def tick(self) -> TickReport:
        """A whole tick in this process: every task of the window, dispatched here, in bucket order."""
        now = self.clock.now()
        tasks, last, shards, buckets = self._window(now)
        report = TickReport(buckets=buckets, tasks=len(tasks))
        with ThreadPoolExecutor(max_workers=PARALLELISM) as pool:
            for task in tasks:
                report.add(self._dispatch_partition(task, now, pool))
        self.store.due.set_watermark(last, shards)
        return report

    # -- the queue trigger: one partition ---------------------------------------------------------------

    def handle_task(self, text: str) -> TickReport:
        """Entry point of the dispatch queue trigger. Entries that fail stay for a later tick (logged)."""
        try:
            task = ShardTask.from_json(text)
        except MalformedTask as exc:
            log.error("dropping a malformed dispatch task: %s", exc)
            return TickReport()
        if task.account >= self.store.due.accounts:
            log.error("dropping a dispatch task for storage account %d: %d account(s) configured", task.account,
                      self.store.due.accounts)
            return TickReport()
        with ThreadPoolExecutor(max_workers=PARALLELISM) as pool:
            report = self._dispatch_partition(task, self.clock.now(), pool)
        report.tasks = 1
        if any(report.of(outcome) for outcome in DispatchOutcome):
            log.info("dispatched bucket %s shard %d: %s", task.bucket, task.shard,
                     ", ".join(f"{report.of(o)} {o.value}" for o in DispatchOutcome if report.of(o)))
        return report

    @traced_dispatch
    def _dispatch_partition(self, task: ShardTask, now: datetime, pool: ThreadPoolExecutor) -> TickReport:
        report = TickReport()
        entries = self.store.due.in_account(task.account).entries(task.bucket, task.shard)
        for page in chunks(entries, PAGE):
            report.add(self._dispatch_page(page, now, pool))
        return report

    def _dispatch_page(self, entries: list[DueEntry], now: datetime, pool: ThreadPoolExecutor) -> TickReport:
        report = TickReport()
        done: list[DueEntry] = []
        plans: list[_Plan] = []
        for entry, job in zip(entries, self._read_all(entries, pool), strict=True):
            if isinstance(job, Exception):
                report.count(DispatchOutcome.FAILED)
                log.error("dispatching %s at %s failed: %s; a later tick retries it", entry.job.resource_id,
                          entry.due.isoformat(), job)
            elif job is None or job.next_execution_time != entry.due:
                # An entry is the job's own when the job is due at its instant (its row is keyed by job and
                # instant), whatever generation wrote it: a dispatch that lost a race may have re-added it.
                done.append(entry)  # the job moved on, changed, or is gone
                report.count(DispatchOutcome.STALE)
            else:
                plans.append(self._plan(job, entry, now))
        try:
            self._write(plans, pool)
        except Exception:
            log.exception("dispatching %d entries failed; a later tick retries them", len(plans))
            report.count(DispatchOutcome.FAILED, len(plans))
            plans = []
        for plan in plans:
            report.count(plan.outcome)
            if plan.advanced is not None:
                done.append(plan.entry)
        self.store.due.remove_entries(done)
        return report

    def _read(self, entry: DueEntry) -> JobRecord | None:
        return self.store.jobs.get(entry.job)

    def _read_all(self, entries: list[DueEntry], pool: ThreadPoolExecutor) -> list[JobRecord | None | Exception]:
        """Every entry's job: read together (a query per 14) with the other jobs of its collection, or alone;
        an item's exception is its result."""
        found: dict[JobKey, JobRecord | None] = {}
        groups = groups_of(entry.job for entry in entries)
        for answer in _each(pool, lambda keys: self.store.jobs.get_many(keys[0].collection_key, keys), groups):
            if not isinstance(answer, Exception):  # a failed query: its jobs are read one by one below
                found.update(answer)
        rest = [entry for entry in entries if entry.job not in found]
        alone = dict(zip((entry.job for entry in rest), _each(pool, self._read, rest), strict=True))
        return [found[entry.job] if entry.job in found else alone[entry.job] for entry in entries]

    # -- one occurrence: plan, then write in order ---------------------------------------------------------

    def _plan(self, job: JobRecord, entry: DueEntry, now: datetime) -> _Plan:
        step = jobstate.dispatch_step(job, entry.due, now)
        message = None
        if step.runs:
            message = OccurrenceMessage(job.key, step.occurrence, step.occurrence, Trigger.SCHEDULE,
                                        generation=job.generation)
        return _Plan(entry, job, step, message, jobstate.postponed_note(job, step, now))

    def _write(self, plans: list[_Plan], pool: ThreadPoolExecutor | None) -> None:
        """Postponed notes, then the messages, then the following entries, then the jobs: a failure after
        any step leaves a state a later dispatch repairs (a duplicate message, or a stale entry)."""
        for plan in plans:
            if plan.postponed is not None:
                self.store.history.add(plan.postponed, plan.entry.due)
        self._send([p.message for p in plans if p.message is not None])
        # The index entry goes before the job advances (as in the API's planning): a failure after it
        # leaves a stale entry, which a tick drops, whereas a job advanced without its entry would never run.
        self.store.due.add_many((p.job.key, p.step.following, p.job.generation) for p in plans if p.step.following)
        for plan, advanced in zip(plans, self._advance_all(plans, pool), strict=True):
            if isinstance(advanced, Exception):
                plan.failed = True
                log.error("advancing %s failed: %s; a later tick retries it", plan.job.key.resource_id, advanced)
            else:
                plan.advanced = advanced

    def _send(self, messages: list[OccurrenceMessage]) -> None:
        """One queue message per due second (of this task's shard), up to BATCH_MAX occurrences each: a
        same-second herd is one executor invocation, one watchdog and one delete per hundred."""
        for batch in batches(messages):
            # The queue counts visibility from the send, and a busy dispatch sends seconds after it started:
            # the delay must be measured from now, not from the tick's start.
            self.store.queue.send(batch, self.clock.now())

    def _advance_all(self, plans: list[_Plan], pool: ThreadPoolExecutor | None) -> list[JobRecord | None | Exception]:
        """Every plan's advance: the jobs of one collection read again together (a query per 14) and written
        together under those ETags (entity-group transactions of up to 100), so the executors' status updates
        since the plan's read rarely make a transaction fail; a job that changed in between, or whose
        transaction failed, goes through its own read-modify-write (`_advance`)."""
        results: dict[int, JobRecord | None | Exception] = {}
        groups: dict[CollectionKey, list[int]] = {}
        for index, plan in enumerate(plans):
            groups.setdefault(plan.job.key.collection_key, []).append(index)
        chunked = [chunk for group in groups.values() if len(group) > 1 for chunk in chunks(group, 100)]

        def write(chunk: list[int]) -> dict[int, JobRecord | None]:
            fresh = self.store.jobs.get_many(plans[chunk[0]].job.key.collection_key, [plans[i].job.key for i in chunk])
            decided: dict[int, JobRecord | None] = {}
            writes: list[tuple[int, JobRecord]] = []
            for i in chunk:
                if plans[i].job.key not in fresh:
                    continue  # unreadable: alone, below
                try:
                    current = fresh[plans[i].job.key]
                    updated = _advance_of(plans[i], current) if current is not None else None
                except _Replanned:
                    decided[i] = None
                    continue
                if current is None or updated is None:
                    decided[i] = current  # gone (a race lost to the delete), or already advanced by our write
                else:
                    writes.append((i, updated))
            for (i, _), record in zip(writes, self.store.jobs.replace_many([u for _, u in writes]), strict=True):
                if record is not None:
                    decided[i] = record
            return decided

        for written in _each(pool, write, chunked):
            if not isinstance(written, Exception):  # a failed chunk: each of its jobs alone, below
                results.update(written)
        rest = [index for index in range(len(plans)) if index not in results]
        for index, answer in zip(rest, _each(pool, self._advance, [plans[i] for i in rest]), strict=True):
            results[index] = answer
        return [results[index] for index in range(len(plans))]

    def _advance(self, plan: _Plan) -> JobRecord | None:
        """Move the job past the dispatched occurrence under its ETag: the job as written, or None if another
        write won the race."""
        try:
            # None: deleted meanwhile, a race lost to the delete
            return read_modify_write(lambda: self.store.jobs.get(plan.job.key), lambda job: _advance_of(plan, job),
                                     lambda job, _: self.store.jobs.replace(job), attempts=ADVANCE_ATTEMPTS,
                                     current=plan.job)
        except (_Replanned, ConcurrencyError):
            return None  # lost to another write (ConcurrencyError: every one of ADVANCE_ATTEMPTS)

    def dispatch(self, job: JobRecord, due: datetime, now: datetime) -> JobRecord | None:
        """Enqueue the job's occurrence at `due`, then advance it to the next one: the job as advanced, or None
        if it lost a race or a storage fault stopped the advance (the entry stays either way: a tick finishes
        or drops it)."""
        plan = self._plan(job, DueEntry(job.key, due, job.generation), now)
        self._write([plan], None)
        if plan.advanced is not None:
            self.store.due.remove(job.key, due)
        return plan.advanced


def _advance_of(plan: _Plan, job: JobRecord) -> JobRecord | None:
    """The job moved past the plan's occurrence; None when it already is (our write landed, but its answer was
    lost and the SDK's retry saw our new ETag). Raises _Replanned when a rewrite re-planned it since the plan."""
    planned, step, generation = plan.job, plan.step, plan.job.generation
    if job is not planned and jobstate.has_advanced(job, generation, step):
        return None
    # The executor updates counters on the same entity: when the job was read again, advance only if it is
    # still the one we planned for (a PUT/PATCH re-plans it by itself).
    if job is not planned and not jobstate.still_due(job, generation, step.due):
        raise _Replanned
    return jobstate.advanced(job, step)


def _each(pool: ThreadPoolExecutor | None, fn: Callable[[T], R], items: Iterable[T]) -> list[R | Exception]:
    """fn over items side by side (each costs storage round trips); an item's exception is its result."""
    def guarded(item: T) -> R | Exception:
        try:
            return fn(item)
        except Exception as exc:  # one bad item must not stop the others
            return exc
    return list(pool.map(guarded, items)) if pool is not None else [guarded(item) for item in items]
