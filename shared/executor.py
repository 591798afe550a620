"""The executor: run one queued occurrence attempt, record it, and decide what follows.

Per message: wait for its due second, claim the attempt (a duplicate delivery stops here), check the
job and its collection may run, run the action, write history, enqueue what follows (a retry, the
error action), and update the job's status under its ETag. That update also marks the attempt done,
so counters and done-ness change together; everything before it is repeated, never lost, after a
crash (duplicate follow-ups die at their own claims).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError

from .actions import ActionResult, ActionRunner, ExecutionContext
from .clock import Clock
from .keys import CollectionKey
from .leases import Guard, Guards
from .model import JobCollectionState, JobErrorAction, JobExecutionStatus, JobHistoryActionName, JobState
from .occurrence import MalformedMessage, OccurrenceMessage, Trigger
from .planning import following_occurrence, repeat_count
from .records import HistoryRecord, JobRecord
from .retry import MAIN_ACTION_DEFAULT, effective_retry
from .settings import Settings
from .store import ConcurrencyError, Store
from .telemetry import attempt_done, outgoing_headers, poisoned, traced_execution

log = logging.getLogger(__name__)

# An Enabled collection is re-read at most this often per worker: Disable also disables every job (read
# fresh each time), so only Suspend waits this long to stop a collection's executions.
COLLECTION_STATE_TTL = 5.0
# How many recent attempts a job remembers as done (see JobRecord.recent_claims).
RECENT_CLAIMS = 32

# A message that arrives earlier than this before its due time goes back to the queue (long delays
# are split into hops of at most 7 days); a smaller lead is slept off for second-level precision.
EARLY_HOP = timedelta(seconds=2)
# Threads of the executor's own pool (handle_async): at least what one host hands over at once
# (host.json batchSize + newBatchThreshold = 48), so no received message waits unclaimed.
ATTEMPT_THREADS = 64
# After the action ran, its record is written with retries for this long (seconds): giving up would hand
# the attempt back and run the action again, so a storage outage is waited out instead.
RECORD_PATIENCE = 300.0
TRANSIENT = {408, 429, 500, 502, 503, 504}  # storage answers worth retrying


class Executor:
    def __init__(self, store: Store, clock: Clock, actions: ActionRunner, settings: Settings) -> None:
        self.store = store
        self.clock = clock
        self.actions = actions
        self.settings = settings
        self._enabled_seen: dict[CollectionKey, float] = {}  # when each collection was last read as Enabled
        self.guards = Guards(store, clock)
        self._pool_lock = threading.Lock()
        self._threads: ThreadPoolExecutor | None = None

    def handle(self, text: str, delivery: str | None = None) -> None:
        """Entry point of the queue trigger. Raises only for storage faults, which the host retries.

        `delivery` names this delivery: the queue message id, which the host keeps when it redelivers a
        message after a failure, so the redelivery resumes an attempt whose claim it had written.
        """
        try:
            message = OccurrenceMessage.from_json(text)
        except MalformedMessage as exc:
            log.error("dropping a malformed occurrence message to the poison queue: %s", exc)
            self.store.queue.poison(text)
            poisoned("malformed")
            return
        self.run(message, delivery)

    async def handle_async(self, text: str, delivery: str | None = None) -> None:
        """`handle` for an `async def` trigger: every message the host hands over starts at once (and is
        guarded and claimed at once, see shared/leases.py) on the executor's own pool, instead of waiting
        for one of the worker's few threads while the host holds it."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._pool(), self.handle, text, delivery)

    def _pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._threads is None:
                self._threads = ThreadPoolExecutor(ATTEMPT_THREADS, thread_name_prefix="attempt")
            return self._threads

    @traced_execution
    def run(self, message: OccurrenceMessage, delivery: str | None = None) -> None:
        now = self.clock.now()
        if message.due - now > EARLY_HOP:
            self.store.queue.send(message, now)
            return
        guard = self.guards.open(message)
        try:
            self._run_guarded(message, delivery or str(uuid.uuid4()), guard)
        finally:
            self.guards.close(guard)

    def _run_guarded(self, message: OccurrenceMessage, runner: str, guard: Guard) -> None:
        # A message of a replaced definition is dropped before it claims: a PATCH or a disable + enable
        # re-queues the same occurrence (same claim id) for the new generation, and that one must run.
        job = self._current_job(message)
        if job is None:
            log.info("occurrence %s was planned for a deleted or redefined job; dropped", message.claim_id)
            return
        # Claimed before the wait for the due second, so the guard covers every message this worker holds.
        claim = self.store.claims.try_claim(message.job, message.claim_id, self.clock.now(), runner,
                                            self.guards.lease_until(message))
        if claim is None:
            log.info("occurrence %s already ran or is running; duplicate dropped", message.claim_id)
            return
        guard.claim = claim
        fired = False
        try:
            wait = (message.due - self.clock.now()).total_seconds()
            if wait > 0:
                time.sleep(wait)
            if claim.taken_over:
                job = self._current_job(message)  # fresh recent_claims: its first runner may have finished
                if job is not None and message.claim_id in job.recent_claims:
                    job = None  # its first runner finished it, then died before the claim said so
            job = self._runnable_job(job, message) if job is not None else None
            if job is None:
                self.store.claims.complete(claim)
                return
            fired = True  # from here on, the action may have run: never hand the attempt back
            if not self._attempt(job, message):
                self._persist(lambda: self.store.claims.complete(claim), message)
        except BaseException:
            if not fired:
                # A storage fault before the action: free the claim so the host's redelivery (or the
                # watchdog) claims it at once; were the release lost, the redelivery resumes it anyway.
                with contextlib.suppress(Exception):
                    self.store.claims.release(claim)
            raise

    def _current_job(self, message: OccurrenceMessage) -> JobRecord | None:
        """The job, unless it was deleted or redefined after this occurrence was planned."""
        job = self.store.jobs.get(message.job)
        if job is None or job.generation != message.generation:
            return None
        return job

    def _runnable_job(self, job: JobRecord, message: OccurrenceMessage) -> JobRecord | None:
        """The job if its state and its collection's let this message run now."""
        allowed = {JobState.ENABLED, JobState.DISABLED} if message.trigger == Trigger.RUN_NOW else {JobState.ENABLED}
        if message.attempt > 0 or message.action == JobHistoryActionName.ERROR_ACTION:
            # A retry or error action finishes an occurrence that already started: a later occurrence
            # completing (or faulting) the job must not cut its retry policy short.
            allowed |= {JobState.COMPLETED, JobState.FAULTED}
        if job.state not in allowed:
            return None
        if not self._collection_enabled(job.key.collection_key):
            return None  # a Disabled or Suspended collection runs nothing
        return job

    def _collection_enabled(self, key: CollectionKey) -> bool:
        now = time.monotonic()
        seen = self._enabled_seen.get(key)
        if seen is not None and now - seen < COLLECTION_STATE_TTL:
            return True
        collection = self.store.collections.get(key)
        # Only "Enabled" is remembered: a stale "Suspended" would drop (and mark done) occurrences that
        # are due right after the collection is enabled again.
        if collection is not None and collection.state == JobCollectionState.ENABLED:
            self._enabled_seen[key] = now
            return True
        self._enabled_seen.pop(key, None)
        return False

    def _attempt(self, job: JobRecord, message: OccurrenceMessage) -> bool:
        """Run the attempt and record it; False if there was nothing to run (the job was not updated)."""
        main = job.properties.action
        assert main is not None, "validation guarantees every job has an action"
        is_error_action = message.action == JobHistoryActionName.ERROR_ACTION
        action: JobErrorAction | None = main.error_action if is_error_action else main
        if action is None:
            return False
        started = self.clock.now()
        context = ExecutionContext(
            job=job.key, execution_id=message.execution_id, expected_execution_time=message.occurrence,
            attempt=message.attempt, region=self.settings.region, client_request_id=str(uuid.uuid4()),
            extra_headers=outgoing_headers(),
        )
        # Everything that could fail is computed before the action runs: a failure after it would
        # release the claim and run the action again on redelivery.
        scheduled = message.trigger == Trigger.SCHEDULE
        repeat = repeat_count(job, message.occurrence) if scheduled else 0
        result = self.actions.run(action, context)
        ended = self.clock.now()
        self._persist(lambda: self.store.history.add(HistoryRecord(
            key=job.key, execution_id=message.execution_id, expected_execution_time=message.due,
            start_time=started, end_time=ended, action_name=message.action,
            status=JobExecutionStatus.COMPLETED if result.succeeded else JobExecutionStatus.FAILED,
            message=result.message, retry_count=message.attempt, repeat_count=repeat,
        ), message.due), message)

        retry = effective_retry(action.retry_policy, None if is_error_action else MAIN_ACTION_DEFAULT)
        follow_up: OccurrenceMessage | None = None
        occurrence_done = True
        if not result.succeeded and message.attempt < retry.retries:
            follow_up = message.retry(ended + retry.delay(message.attempt))
            occurrence_done = False
        elif not result.succeeded and not is_error_action and main.error_action is not None:
            follow_up = message.error_action(ended)
            occurrence_done = False
        main_faulted = is_error_action or (not result.succeeded and follow_up is None)
        # The occurrence faults once, when the main action's retries run out (faultedCount counts occurrences).
        newly_faulted = not result.succeeded and not is_error_action and (
            follow_up is None or follow_up.action != message.action
        )
        attempt_done(message, action.type, result.succeeded, started, retried=follow_up is not None
                     and follow_up.action == message.action, faulted=newly_faulted)

        def apply(record: JobRecord) -> None:
            if message.claim_id in record.recent_claims:
                return  # a write we could not confirm did land: counting it again would double it
            record.execution_count += 1
            record.failure_count += 0 if result.succeeded else 1
            record.faulted_count += 1 if newly_faulted else 0
            record.last_execution_time = started
            record.recent_claims = (*record.recent_claims, message.claim_id)[-RECENT_CLAIMS:]
            last = record.next_execution_time is None and following_occurrence(record, message.occurrence) is None
            if occurrence_done and scheduled and record.state == JobState.ENABLED and last:
                record.state = JobState.FAULTED if main_faulted else JobState.COMPLETED

        if follow_up is not None:
            self._persist(lambda: self.store.queue.send(follow_up, self.clock.now()), message)
        self._persist(lambda: self._update(job, apply), message)
        log.info("%s %s attempt %d of %s: %s", message.action.value, "succeeded" if result.succeeded else "failed",
                 message.attempt + 1, job.key.resource_id, _first_line(result))
        return True

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

    def _update(self, job: JobRecord, apply: Callable[[JobRecord], None]) -> None:
        """Apply a change to the job's status under its ETag, re-reading after a concurrent write."""
        record: JobRecord | None = job
        for _ in range(10):
            if record is None:
                return  # deleted meanwhile: nothing left to update
            apply(record)
            try:
                self.store.jobs.replace(record)
                return
            except ConcurrencyError:
                record = self.store.jobs.get(job.key)
        raise ConcurrencyError(f"job {job.key.resource_id} kept changing; status update abandoned")


def _first_line(result: ActionResult) -> str:
    return result.message.split(" Response Headers:", 1)[0][:200]

