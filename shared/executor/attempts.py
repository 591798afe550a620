"""One attempt of one occurrence: claim it, run it when its second comes, record it.

The batch (batch.py) calls `prepare` for each of its occurrences before their second (the job may run
and this delivery holds the claim; a duplicate stops here), `fire` at the second, and `record` once its
actions went out. `fire` and `record`: check the job and
its collection may run now, run the action, write history, enqueue what follows (`jobstate.decide`: a
retry, the error action), and update the job's status under its ETag (`jobstate.after_attempt`). What the
job becomes is shared/jobstate's to say; this module is its I/O shell. That update also marks the attempt done, so
counters and done-ness change together; everything before it is repeated, never lost, after a crash
(duplicate follow-ups die at their own claims).
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError

from ..actions import ActionResult, ActionRunner, ExecutionContext
from ..clock import Clock
from ..jobstate import Attempt, AttemptOutcome, Outcome, after_attempt, decide, is_done, may_run, series_of
from ..keys import JobKey
from ..leases import Guard, Guards
from ..model import JobErrorAction, JobExecutionStatus, JobHistoryActionName
from ..occurrence import OccurrenceMessage, Trigger
from ..records import HistoryRecord, JobRecord
from ..retry import MAIN_ACTION_DEFAULT, effective_retry
from ..settings import Settings
from ..store import Claim, ConcurrencyError, Store, read_modify_write
from ..telemetry import attempt_done, outgoing_headers, traced_execution
from ..telemetry.propagation import current_traceparent
from .collection_gate import CollectionGate

log = logging.getLogger(__name__)

# After the action ran, its record is written with retries for this long (seconds): giving up would hand
# the attempt back and run the action again, so a storage outage is waited out instead.
RECORD_PATIENCE = 300.0
TRANSIENT = {408, 429, 500, 502, 503, 504}  # storage answers worth retrying

Blocking = Callable[..., Awaitable[Any]]  # (fn, *args) -> awaitable of fn(*args), run off the event loop


@dataclass(frozen=True)
class Prepared:
    """An attempt this delivery holds: the job as read before the second, and the claim."""

    message: OccurrenceMessage
    job: JobRecord
    claim: Claim


@dataclass(frozen=True)
class Fired:
    """An attempt whose action ran: what is left to record."""

    message: OccurrenceMessage
    job: JobRecord
    claim: Claim
    history: HistoryRecord
    follow_up: OccurrenceMessage | None
    outcome: AttemptOutcome
    succeeded: bool

    def apply(self, record: JobRecord) -> JobRecord | None:
        """The job after this attempt (None: already counted); applied under the job's ETag, maybe again."""
        return after_attempt(record, attempt_of(self.message), self.outcome, self.history.start_time,
                             self.succeeded)


def attempt_of(message: OccurrenceMessage) -> Attempt:
    """The attempt a message carries, as the job state machine sees it."""
    return Attempt(message.claim_id, message.occurrence, message.trigger == Trigger.SCHEDULE, message.action,
                   message.attempt)


class Attempts:
    def __init__(self, store: Store, clock: Clock, actions: ActionRunner, settings: Settings, guards: Guards,
                 io: Blocking) -> None:
        self.store = store
        self.io = io  # runs a blocking (storage) call on the executor's pool and awaits it
        self.clock = clock
        self.actions = actions
        self.settings = settings
        self.guards = guards
        self.collections = CollectionGate(store, io)  # the collection's state at the second

    def prepare(self, message: OccurrenceMessage, runner: str, guard: Guard,
                jobs: Mapping[JobKey, JobRecord | None] | None = None) -> Prepared | None:
        """Check the attempt's job and claim the attempt for `runner`; None when there is nothing to run.
        `jobs`: jobs the batch read together (a range query per collection); any other is read here."""
        # A message of a replaced definition is dropped before it claims: a PATCH or a disable + enable
        # re-queues the same occurrence (same claim id) for the new generation, and that one must run.
        job = self._current_job(message, jobs)
        if job is None:
            log.info("occurrence %s was planned for a deleted or redefined job; dropped", message.claim_id)
            return None
        # Claimed before the wait for the due second, so the guard covers every attempt this worker holds.
        claim = self.store.claims.try_claim(message.job, message.claim_id, self.clock.now(), runner,
                                            self.guards.lease_until(guard.batch))
        if claim is None:
            log.info("occurrence %s already ran or is running; duplicate dropped", message.claim_id)
            return None
        guard.hold(claim)
        return Prepared(message, job, claim)

    @traced_execution
    async def fire(self, message: OccurrenceMessage, prepared: Prepared, guard: Guard) -> Fired | None:
        """At its second: check the job may run now and run the action; what to record, or None when
        nothing ran. Raises only for storage faults before the action (the host redelivers).

        A coroutine: its storage calls run on the executor's pool (`io`), and the action waits on the
        event loop under the process's action limits, holding no thread (shared/actions/limits.py)."""
        claim, job = prepared.claim, prepared.job
        fired = False
        try:
            if claim.taken_over:
                # Read fresh (its recent_claims): its first runner may have finished it.
                fresh = await self.io(self._current_job, message)
                if fresh is not None and is_done(fresh, message.claim_id):
                    fresh = None  # its first runner finished it, then died before the claim said so
                runnable = await self._runnable_job(fresh, message) if fresh is not None else None
            else:
                runnable = await self._runnable_job(job, message)
            if runnable is None:
                await self.io(self.store.claims.complete, claim)
                guard.drop(claim.claim_id)
                return None
            fired = True  # from here on, the action may have run: never hand the attempt back
            done = await self._run_action(runnable, message, claim)
            if done is None:
                await self.io(self._persist, lambda: self.store.claims.complete(claim), message)
                guard.drop(claim.claim_id)
            return done
        except BaseException:
            guard.drop(claim.claim_id)
            if not fired:
                # A storage fault before the action: free the claim so the host's redelivery (or the
                # watchdog) claims it at once; were the release lost, the redelivery resumes it anyway.
                with contextlib.suppress(Exception):
                    await self.io(self.store.claims.release, claim)
            raise

    def record(self, fired: Fired, guard: Guard) -> None:
        """After the batch's actions went out: history, what follows, the job's counters and state.

        Every step is retried through storage faults (`_persist`); the claim stays held meanwhile."""
        try:
            message = fired.message
            self._persist(lambda: self.store.history.add(fired.history, message.due), message)
            follow_up = fired.follow_up
            if follow_up is not None:
                self._persist(lambda: self.store.queue.send(follow_up, self.clock.now()), message)
            self._persist(lambda: self._update(fired.job, fired.apply), message)
        finally:
            guard.drop(fired.claim.claim_id)

    def _current_job(self, message: OccurrenceMessage,
                     jobs: Mapping[JobKey, JobRecord | None] | None = None) -> JobRecord | None:
        """The job, unless it was deleted or redefined after this occurrence was planned."""
        job = jobs[message.job] if jobs is not None and message.job in jobs else self.store.jobs.get(message.job)
        if job is None or job.generation != message.generation:
            return None
        return job

    async def _runnable_job(self, job: JobRecord, message: OccurrenceMessage) -> JobRecord | None:
        """The job if its state (jobstate.may_run) and its collection's, read at this second, let this message
        run now."""
        if not may_run(job, attempt_of(message)):
            return None
        if not await self.collections.enabled(job.key.collection_key):
            return None  # a Disabled, Suspended or Deleted collection runs nothing
        return job

    async def _run_action(self, job: JobRecord, message: OccurrenceMessage, claim: Claim) -> Fired | None:
        """Run the attempt's action and decide what follows; None if there was nothing to run."""
        main = job.properties.action
        assert main is not None, "validation guarantees every job has an action"
        is_error_action = message.action == JobHistoryActionName.ERROR_ACTION
        action: JobErrorAction | None = main.error_action if is_error_action else main
        if action is None:
            return None
        started = self.clock.now()
        context = ExecutionContext(
            job=job.key, execution_id=message.execution_id, expected_execution_time=message.occurrence,
            attempt=message.attempt, region=self.settings.region, client_request_id=str(uuid.uuid4()),
            extra_headers=outgoing_headers(),
        )
        # Everything that could fail is computed before the action runs: a failure after it would
        # release the claim and run the action again on redelivery.
        scheduled = message.trigger == Trigger.SCHEDULE
        repeat = series_of(job).repeat_count(message.occurrence) if scheduled else 0
        retry = effective_retry(action.retry_policy, None if is_error_action else MAIN_ACTION_DEFAULT)
        result = await self.actions.run_async(action, context)
        ended = self.clock.now()
        outcome = decide(succeeded=result.succeeded, is_error_action=is_error_action, attempt=message.attempt,
                         retry=retry, has_error_action=main.error_action is not None)
        follow_up: OccurrenceMessage | None = None
        if outcome.kind == Outcome.RETRY:
            follow_up = message.retry(ended + outcome.delay)
        elif outcome.kind == Outcome.ERROR_ACTION:
            follow_up = message.error_action(ended)
        if follow_up is not None:
            # It is sent after the batch's actions, outside this attempt's span: it names the span now.
            follow_up = replace(follow_up, traceparent=current_traceparent() or message.traceparent)
        attempt_done(message, action.type, result.succeeded, started, retried=outcome.kind == Outcome.RETRY,
                     faulted=outcome.faults_occurrence)
        log.info("%s %s attempt %d of %s: %s", message.action.value, "succeeded" if result.succeeded else "failed",
                 message.attempt + 1, job.key.resource_id, _first_line(result))
        history = HistoryRecord(
            key=job.key, execution_id=message.execution_id, expected_execution_time=message.due,
            start_time=started, end_time=ended, action_name=message.action,
            status=JobExecutionStatus.COMPLETED if result.succeeded else JobExecutionStatus.FAILED,
            message=result.message, retry_count=message.attempt, repeat_count=repeat,
        )
        return Fired(message, job, claim, history, follow_up, outcome, result.succeeded)

    def _persist(self, step: Callable[[], object], message: OccurrenceMessage) -> None:
        """Run a bookkeeping step after the action, retrying storage faults for up to RECORD_PATIENCE.

        Every step is idempotent (history rows are keyed by attempt, a follow-up's duplicate dies at its
        claim, the job update checks recent_claims), so repeating one whose answer was lost is harmless.
        The guard keeps the claim meanwhile, so no other worker runs the attempt again.
        """
        deadline = time.monotonic() + RECORD_PATIENCE
        delay = 0.2
        while True:
            try:
                step()
                return
            except (ServiceRequestError, ServiceResponseError, HttpResponseError) as error:
                transient = not isinstance(error, HttpResponseError) or (error.status_code or 0) in TRANSIENT
                if not transient or time.monotonic() > deadline:
                    raise
                log.warning("recording attempt %s failed (%s); retrying", message.claim_id, type(error).__name__)
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _update(self, job: JobRecord, change: Callable[[JobRecord], JobRecord | None]) -> None:
        """Write a change to the job's status under its ETag, re-reading after a concurrent write (a job deleted
        meanwhile has nothing left to update)."""
        try:
            read_modify_write(lambda: self.store.jobs.get(job.key), change,
                              lambda record, _: self.store.jobs.replace(record), attempts=10, current=job)
        except ConcurrencyError as exc:
            raise ConcurrencyError(f"job {job.key.resource_id} kept changing; status update abandoned") from exc


def _first_line(result: ActionResult) -> str:
    return result.message.split(" Response Headers:", 1)[0][:200]

