"""The dispatcher: turn due-index entries into queued occurrences, fanned out over instances.

Once a minute the timer (`fan_out`) enqueues one dispatch task per (minute bucket, shard) from its watermark up to
its horizon, one whole minute ahead of the current one; the queue-triggered `handle_task` dispatches one such
partition on whichever instance takes it. Per entry: enqueue the occurrence (visible at its due second), index the
job's following occurrence, advance the job under its ETag, delete the entry. Working a minute ahead means a
dispatch's own duration never makes an occurrence late; the minute ahead's tasks turn visible shard by shard over
the first half of the minute before (`spread_delay`), so that the process dispatching does not starve the
occurrences due meanwhile of CPU. Each step is done for a page of entries at once (index writes batched per
partition; the jobs of one collection read together and advanced in entity-group transactions, due_jobs.py), and
every step comes before the ones that depend on it, so a crash anywhere duplicates rather than loses: the entries
stay, a later task re-reads them, and the executor's claim drops the duplicate occurrence. A task is idempotent;
the timer re-sends the last buckets (`dispatch_overlap`) and sweeps older buckets for leftovers, so a task lost or
failed is done again by a later tick. A host that dies while it dispatches does not leave the work to a later
tick: the tasks of the minute the tick dispatches ahead (and the sweeps of leftovers) are sent after a watchdog,
and a task that finds entries keeps one while it works (shared/leases.py), so a live host takes the task up again
about `task_watchdog_after` later. A tick missed while no host ran is made up when a host starts again: the
timer's schedule monitor (function_app.py, `use_monitor`) runs it at once, past due.

What the job becomes at each step is shared/jobstate's to say (`dispatch_step`, `advanced`); the dispatcher is its
I/O shell. Which tasks a tick sends: tick_window.py. A collection's `autoSpread` moves the fire instants of a
crowded second (spread_plans.py). After each tick the dispatcher writes its heartbeat (shared/health.py) and hands
what it saw to telemetry with the report. `tick` does a whole tick in this process (tests, tools). An occurrence
the API plans before the horizon is queued by `dispatch`, or by a task of its partition (first_dispatch.py): a
task reads its partition's entries after removing the partition's waiting mark (`DueIndex.to_dispatch`).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Executor
from datetime import datetime, timedelta

from . import health, jobstate
from .clock import Clock
from .dispatch_report import DispatchOutcome, TickReport
from .due_jobs import Plan, advance_plans, read_jobs
from .jobstate import DispatchStep
from .leases import TaskWatchdogs
from .occurrence import OccurrenceMessage, Trigger, batches
from .records import JobRecord
from .spread_plans import SpreadPlans
from .store import DueEntry, Store
from .store.queues import ShardTask
from .store.tables import chunks
from .task_run import TaskRun, parse_task
from .telemetry import traced_dispatch, traced_tick
from .threads import DISPATCH_FANOUT, Threads
from .tick_window import TICK, dispatch_horizon, spread_delay, tick_window

log = logging.getLogger(__name__)
__all__ = ["TICK", "DispatchOutcome", "Dispatcher", "TickReport", "dispatch_horizon", "spread_delay"]

PAGE = 500  # entries dispatched step by step together: bounds memory and the work a crash repeats


class Dispatcher:
    """`spread`: how much of the minute before it the dispatch of a minute is spread over (`spread_delay`). All
    at once at the minute's start, the dispatch of a busy minute takes the process's CPU for seconds, and the
    occurrences due then (run by the same process) are late by as much.

    `span` (the timings' `batch_span` unless given): a shard's occurrences due within this of each other go in one
    queue message (up to BATCH_MAX): a message per second and shard (each with its watchdog and backstop) would be
    most of a steady load's queue work (docs/execution.md). Each occurrence still fires at its own second.

    `threads`: the process's (shared/threads.py): a task's job reads and advances on a share of the dispatch-fanout
    lane, its watchdog renewed on the dispatch-renewer's. None: threads of its own (tests, tools), never closed."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        spread: timedelta = timedelta(0),
        span: timedelta | None = None,
        threads: Threads | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.spread = spread
        self.timings = store.timings
        self.span = self.timings.batch_span if span is None else span  # seconds of a shard one queue message holds
        self.threads = threads or Threads(clock)
        self.watchdogs = TaskWatchdogs(store, clock, self.threads)
        self.spread_plans = SpreadPlans(store)  # collections' autoSpread

    # -- the timer: decide the tasks ------------------------------------------------------------------

    @traced_tick
    def fan_out(self, spread: bool = True) -> TickReport:
        """The minute timer: one dispatch task per (bucket, shard) onto the dispatch queue; then the
        watermark moves. A timer that dies part-way leaves the watermark, so the next one re-sends all.
        `spread`: False for a tick made up after an outage, whose tasks are sent visible at once."""
        started = time.perf_counter()
        now = self.clock.now()
        window = tick_window(self.store, now)
        for task in window.tasks:
            # The tasks that hold the work go after a watchdog; an overlap task that finds entries guards itself.
            margin = self.timings.spread_margin
            delay = spread_delay(task.bucket, task.shard, window.shards, now, self.spread, margin) if spread else 0.0
            self.store.dispatch.send(task, guarded=task in window.fresh, delay=delay)
        self.store.due.set_watermark(window.last, window.shards)
        return self._heartbeat(TickReport(buckets=window.buckets, tasks=len(window.tasks)), started)

    @traced_tick
    def tick(self) -> TickReport:
        """A whole tick in this process: every task of the window, dispatched here, in bucket order."""
        started = time.perf_counter()
        now = self.clock.now()
        window = tick_window(self.store, now)
        report = TickReport(buckets=window.buckets, tasks=len(window.tasks))
        pool = self.threads.share(DISPATCH_FANOUT)
        for task in window.tasks:
            report.add(self._dispatch_shard(task, now, pool))
        self.store.due.set_watermark(window.last, window.shards)
        return self._heartbeat(report, started)

    def _heartbeat(self, report: TickReport, started: float) -> TickReport:
        """Write the heartbeat and keep what it saw on the report (telemetry records it from there). `started`: the
        tick's perf_counter at its start, real time on any clock: the duration is the work's, for health to show."""
        try:
            report.observation = health.record_tick(
                self.store, self.clock.now(), time.perf_counter() - started, report.tasks
            )
        except Exception:  # the tick itself succeeded; the next one writes the heartbeat
            log.warning("the dispatcher heartbeat could not be written", exc_info=True)
        return report

    # -- the queue trigger: one partition ---------------------------------------------------------------

    def handle_task(self, text: str) -> TickReport:
        """A dispatch queue message's task, here (`run_task`); one to drop (`parse_task`), nothing."""
        return TickReport() if (task := parse_task(text, self.store.due.accounts)) is None else self.run_task(task)

    def run_task(self, task: ShardTask) -> TickReport:
        """A dispatch task's work, here, its held advances waited for on this thread (a sender's whose task could
        not go, tools, tests); the queue trigger waits off its thread instead (dispatch_trigger.py)."""
        run = self.begin_task(task)
        run.wait(self.clock)
        return self.finish_task(run)

    def begin_task(self, task: ShardTask) -> TaskRun:
        """A dispatch task up to its held advances (shared/task_run.py): `finish_task` does them once `until` has
        passed; while it has entries to dispatch, a watchdog stands in for the task."""
        run = TaskRun(task)
        run.report.add(self._dispatch_shard(task, self.clock.now(), self.threads.share(DISPATCH_FANOUT), run))
        return run

    def finish_task(self, run: TaskRun) -> TickReport:
        """The task's held advances (its caller waited for `run.until`), then its watchdog closed."""
        try:
            if run.held:
                run.report.add(self._advance_held(run.task, run.held, self.threads.share(DISPATCH_FANOUT)))
        except BaseException as error:
            run.let_go(self.watchdogs, error)
            raise
        run.close(self.watchdogs)
        if done := ", ".join(f"{run.report.of(o)} {o.value}" for o in DispatchOutcome if run.report.of(o)):
            log.info("dispatched %s: %s", run.task, done)
        return run.report

    @traced_dispatch
    def _dispatch_shard(self, task: ShardTask, now: datetime, pool: Executor, run: TaskRun | None = None) -> TickReport:
        """`run`: the task came by queue (its plans may wait, its watchdog is kept there); None: a tick in process."""
        report = TickReport()
        entries = self.store.due.in_account(task.account).to_dispatch(task.bucket, task.shard)
        if run is not None and not entries:
            self.watchdogs.drop(task)
            return report
        if run is not None:
            run.watch = self.watchdogs.open(task)
        try:
            for page in chunks(entries, PAGE):
                report.add(self._dispatch_page(page, now, pool, None if run is None else run.held))
        except BaseException as error:
            if run is not None:
                run.let_go(self.watchdogs, error)
            raise
        return report

    def _dispatch_page(
        self, entries: list[DueEntry], now: datetime, pool: Executor, held: list[Plan] | None = None
    ) -> TickReport:
        """`held`: where the plans whose advance waits go (`_write`); None: every job advanced at once."""
        report = TickReport()
        done: list[DueEntry] = []
        plans: list[Plan] = []
        for entry, job in zip(entries, read_jobs(self.store, [e.job for e in entries], pool), strict=True):
            if isinstance(job, Exception):
                report.count(DispatchOutcome.FAILED)
                log.error(
                    "dispatching %s at %s failed: %s; a later tick retries it",
                    entry.job.resource_id,
                    entry.due.isoformat(),
                    job,
                )
            elif job is None or job.next_execution_time != entry.due:
                # An entry is the job's own when the job is due at its instant (its row is keyed by job and
                # instant), whatever generation wrote it; one its write in flight may yet make so stays.
                if jobstate.awaits_its_write(job, entry.due, entry.generation, now, self.timings.write_in_flight):
                    report.count(DispatchOutcome.RACED)
                    continue
                done.append(entry)  # the job moved on, changed, or is gone
                report.count(DispatchOutcome.STALE)
            else:
                plans.append(self._plan(job, entry, now))
        try:
            self._write(plans, pool, held)
        except Exception:
            # A plan already held (its occurrence sent, its next entry written) is advanced and counted later.
            failed = [plan for plan in plans if plan.held_until is None]
            log.exception("dispatching %d entries failed; a later tick retries them", len(failed))
            report.count(DispatchOutcome.FAILED, len(failed))
            plans = []
        self._settle([plan for plan in plans if plan.held_until is None], report, done)
        return report

    def _settle(self, plans: list[Plan], report: TickReport, done: list[DueEntry]) -> None:
        """Count the advanced plans' outcomes, and remove their entries with `done` (the stale ones)."""
        for plan in plans:
            report.count(plan.outcome)
            if plan.advanced is not None:
                done.append(plan.entry)
        self.store.due.remove_entries(done)

    @traced_dispatch
    def _advance_held(self, task: ShardTask, held: list[Plan], pool: Executor) -> TickReport:
        """The advances that waited (`jobstate.recorded_by`), their recorders' writes now due in: each job read
        again (it holds those writes) and advanced from there. A span of its own, under the task's tick."""
        for plan in held:
            plan.held_until = None
        advance_plans(self.store, held, pool, read_jobs(self.store, [plan.job.key for plan in held], pool))
        report = TickReport()
        self._settle(held, report, [])
        return report

    # -- one occurrence: plan, then write in order ---------------------------------------------------------

    def _plan(self, job: JobRecord, entry: DueEntry, now: datetime) -> Plan:
        step = jobstate.dispatch_step(job, entry.due, now)
        messages = [
            OccurrenceMessage(
                job.key, occurrence, self._fire(job, step, occurrence, now), Trigger.SCHEDULE, generation=job.generation
            )
            for occurrence in step.queued
        ]
        return Plan(
            entry, job, step, messages, jobstate.postponed_note(job, step, now), jobstate.let_go(job, step, now)
        )

    def _fire(self, job: JobRecord, step: DispatchStep, occurrence: datetime, now: datetime) -> datetime:
        """The step's instant for the occurrence, later by its collection's automatic spread (a catch-up or a
        resume is spaced by its own rule)."""
        due = step.due_of(occurrence, now)
        if step.catch_up is not None or step.resume_at is not None:
            return due
        return due + self.spread_plans.offset(job, occurrence, due)

    def _write(self, plans: list[Plan], pool: Executor | None, held: list[Plan] | None = None) -> None:
        """Postponed notes and the ledger entries of what they skipped, then the messages, then the following
        entries, then the jobs: a failure after any step leaves a state a later dispatch repairs (a duplicate
        message, or a stale entry). With `held`, a job whose running occurrence is about to be recorded is not
        advanced yet: its plan goes to `held`, marked with when its advance may go (`jobstate.recorded_by`)."""
        notes = [(plan.postponed, plan.entry.due) for plan in plans if plan.postponed is not None]
        let_go = [entry for plan in plans for entry in plan.let_go]
        if notes or let_go:  # in transactions of up to 100 rows per job: one request for a usual catch-up
            self.store.history.add_all(notes, let_go)
        self._send([message for p in plans for message in p.messages])
        # The index entry goes before the job advances (as in the API's planning): a failure after it
        # leaves a stale entry, which a tick drops, whereas a job advanced without its entry would never run.
        self.store.due.add_many((p.job.key, p.step.following, p.job.generation) for p in plans if p.step.following)
        if held is not None:
            # The furthest ahead of its second an executor reads a batch's jobs: a batch further ahead hops back.
            now, lead = self.clock.now(), self.timings.early_hop
            for plan in plans:
                plan.held_until = jobstate.recorded_by(plan.job, now, lead, self.timings.advance_settle)
            held.extend(plan for plan in plans if plan.held_until is not None)
        advance_plans(self.store, [plan for plan in plans if plan.held_until is None], pool)

    def _send(self, messages: list[OccurrenceMessage]) -> None:
        """One queue message per `span` of this task's shard's seconds, up to BATCH_MAX occurrences each: a
        same-second herd is one executor invocation, one watchdog and one delete per hundred."""
        for batch in batches(messages, self.span):
            # The queue counts visibility from the send, and a busy dispatch sends seconds after it started:
            # the delay must be measured from now, not from the tick's start.
            self.store.queue.send(batch, self.clock.now())

    def dispatch(self, job: JobRecord, due: datetime, now: datetime) -> JobRecord | None:
        """Enqueue the job's occurrence at `due`, then advance it to the next one (as `dispatch_all`)."""
        return self.dispatch_all([(job, due)], now)[0]

    def dispatch_all(self, due: list[tuple[JobRecord, datetime]], now: datetime) -> list[JobRecord | None]:
        """Enqueue each job's occurrence at its instant, then advance it to the next one (a collection's jobs in
        transactions): each job as advanced, or None if it lost a race or a storage fault stopped the advance (the
        entry stays either way: a tick finishes or drops it)."""
        plans = [self._plan(job, DueEntry(job.key, at, job.generation), now) for job, at in due]
        self._write(plans, None)
        self.store.due.remove_entries([plan.entry for plan in plans if plan.advanced is not None])
        return [plan.advanced for plan in plans]
