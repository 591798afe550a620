"""One attempt of one occurrence: claim it, then run it when its second comes.

The batch (batch.py) checks each occurrence's job (`jobs_of`) and claims its attempts before their second,
a transaction per collection (`prepared`: the job may run and this delivery holds the claim; a duplicate
stops here), then calls `fire` at the second: admission once (admission.py: run, wait or skip, its checks in
their order), the action, its limits' slots given back, and what follows decided (`jobstate.decide`: a retry,
the error action). What `fire` returns goes to the recorder (recorder.py) at once: history, the follow-up, and
the job's status under its ETag (`jobstate.after_attempt`), which also marks the attempt done. What the job
becomes is shared/jobstate's to say; this module is its I/O shell.

`jobs_of` and `take_over` block (storage); `fire` is a coroutine: its storage calls run on the executor's
pool (`io`) and the action waits on the event loop under the process's action limits (shared/actions/
limits.py), holding no thread, so the actions in flight are bounded by settings, not by a pool.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from datetime import timedelta

from ..actions import ActionResult, ActionRunner, ExecutionContext
from ..clock import Clock
from ..jobstate import Outcome, decide, series_of
from ..keys import JobKey
from ..leases import Guard, Guards
from ..model import JobExecutionStatus, JobHistoryActionName
from ..occurrence import OccurrenceMessage, Trigger
from ..records import HistoryRecord, JobRecord
from ..retry import MAIN_ACTION_DEFAULT, effective_retry
from ..settings import Settings
from ..store import Claim, Expired, Store
from ..telemetry import attempt_done, occurrence_skipped, outgoing_headers, traced_execution
from ..telemetry.propagation import current_traceparent
from .admission import Admission, Blocking, Run
from .deferrals import Deferral
from .fired import Fired, action_of
from .job_order import Turn
from .limits import Admitted
from .not_run import record_superseded
from .persist import persist
from .polling import GoesOn, Polling, covering

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prepared:
    """An attempt this delivery holds: the job as read before the second, and the claim."""

    message: OccurrenceMessage
    job: JobRecord
    claim: Claim


@dataclass(frozen=True)
class Expiring:
    """An attempt whose claim another runner's lapsed lease holds: `take_over` once `takeover_wait` has passed."""

    message: OccurrenceMessage
    job: JobRecord
    expired: Expired


class Attempts:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        actions: ActionRunner,
        settings: Settings,
        guards: Guards,
        io: Blocking,
        deferrals: Executor,
    ) -> None:
        self.store = store
        self.clock = clock
        self.actions = actions
        self.settings = settings
        self.guards = guards
        self.io = io  # runs a blocking (storage) call on the executor's pool and awaits it
        self.admission = Admission(store, clock, io, deferrals)  # run, wait or skip, asked once at the second
        self.polling = Polling(store, clock, actions, io)  # long-running completion (202 and poll)

    def jobs_of(
        self, messages: Sequence[OccurrenceMessage], jobs: Mapping[JobKey, JobRecord | None]
    ) -> list[JobRecord | None]:
        """Each attempt's job, when the attempt may be claimed; None when there is nothing to run. `jobs`: the
        jobs the batch read together (a query per 14 of one collection); any other is read here."""
        found: list[JobRecord | None] = []
        dropped: list[tuple[JobRecord, OccurrenceMessage]] = []
        for message in messages:
            # A message of a replaced definition is dropped before it claims: a PATCH or a disable + enable
            # re-queues the same occurrence (same claim id) for the new generation, and that one must run.
            current = jobs[message.job] if message.job in jobs else self.store.jobs.get(message.job)
            job = current if current is not None and current.generation == message.generation else None
            if job is None:
                log.info("occurrence %s was planned for a deleted or redefined job; dropped", message.claim_id)
                occurrence_skipped(message, "job_changed")
                if current is not None:
                    dropped.append((current, message))
            found.append(job)
        if dropped:
            record_superseded(self.store, dropped, self.clock.now())
        return found

    def prepared(
        self, message: OccurrenceMessage, job: JobRecord, claim: Claim | Expired | None, guard: Guard
    ) -> Prepared | Expiring | None:
        """What its claim (taken with the others of its collection, batch.py) makes of an attempt: Prepared when
        this delivery holds it (the guard then covers it), Expiring when a runner that may be dead holds it,
        None when it ran or runs elsewhere."""
        if claim is None:
            log.info("occurrence %s already ran or is running; duplicate dropped", message.claim_id)
            return None
        if isinstance(claim, Expired):
            return Expiring(message, job, claim)
        guard.hold(claim)
        return Prepared(message, job, claim)

    def take_over(self, expiring: Expiring, guard: Guard) -> Prepared | None:
        """After `takeover_wait`: the attempt, unless its runner showed it is alive (or another worker took it)."""
        claim = self.store.claims.take_over(expiring.expired, self.guards.lease_until(guard.batch))
        if claim is None:
            log.info("occurrence %s is running elsewhere; duplicate dropped", expiring.message.claim_id)
            return None
        guard.hold(claim)
        return Prepared(expiring.message, expiring.job, claim)

    @traced_execution
    async def fire(
        self, message: OccurrenceMessage, prepared: Prepared, guard: Guard, turn: Turn | None = None
    ) -> Fired | None:
        """At its second: admission, then the action, its slots released, and what follows decided; what to
        record, or None when nothing ran. Raises only for storage faults before the action (the host redelivers)."""
        claim = prepared.claim
        try:
            answer = await self.admission.admit(message, prepared.job, claim, guard)
        except BaseException:
            guard.drop(claim.claim_id)
            # A storage fault before the action: free the claim so the host's redelivery (or the watchdog)
            # claims it at once; were the release lost, the redelivery resumes it anyway.
            with contextlib.suppress(Exception):
                await self.io(self.store.claims.release, claim)
            raise
        if not isinstance(answer, Run):
            return None  # it waits or was skipped: admission gave its claim back or finished it
        # From here on, the action may have run: never hand the attempt back.
        try:
            done = await self._acted(answer, message, claim, turn)
            if isinstance(done, Deferral):  # its destination pushed back: nothing was done, it goes again later
                guard.drop(claim.claim_id)
                await self.admission.limits.requeue(done, lambda: self.store.claims.release(claim))
                return None
            if not isinstance(done, Fired):  # nothing ran, or its work goes on (polled): its claim is done
                complete = functools.partial(self.store.claims.complete, claim)
                await self.io(persist, self.clock, self.store.timings, complete, message.claim_id)
        except BaseException:
            guard.drop(claim.claim_id)
            raise
        if not isinstance(done, Fired):
            guard.drop(claim.claim_id)
            return None
        return done

    async def _acted(
        self, run: Run, message: OccurrenceMessage, claim: Claim, turn: Turn | None
    ) -> Fired | GoesOn | Deferral | None:
        """The action run; then its slots given back (kept while its work is polled)."""
        done: Fired | GoesOn | Deferral | None = None
        try:
            done = await self._run_action(run.job, message, claim, run.admitted, turn)
            return done
        finally:
            await self.admission.release(run, done.next_due if isinstance(done, GoesOn) else None)

    async def _run_action(
        self,
        job: JobRecord,
        message: OccurrenceMessage,
        claim: Claim,
        admitted: Admitted | None = None,
        turn: Turn | None = None,
    ) -> Fired | GoesOn | Deferral | None:
        """Run the attempt's action and decide what follows; GoesOn while its work is polled, a Deferral when its
        destination pushed back (destinations.py), None if there was nothing to run."""
        main = job.properties.action
        assert main is not None, "validation guarantees every job has an action"
        is_error_action = message.action == JobHistoryActionName.ERROR_ACTION
        action = action_of(job, message)
        if action is None:
            return None
        started = self.clock.now()
        if turn is not None and turn.not_before is not None:  # ready ahead of its second: it starts then
            started = max(started, turn.not_before)
        paced = admitted.before_send if admitted is not None else None
        context = ExecutionContext(
            job=job.key,
            execution_id=message.execution_id,
            expected_execution_time=message.occurrence,
            attempt=message.attempt,
            region=self.settings.region,
            client_request_id=str(uuid.uuid4()),
            extra_headers=outgoing_headers(),
            # Its rate limit's turn on the wire, then its job's next attempt may go (job_order.py).
            before_send=turn.before_send(paced, self.clock) if turn is not None else paced,
        )
        # Everything that could fail is computed before the action runs: a failure after it would
        # release the claim and run the action again on redelivery.
        scheduled = message.trigger == Trigger.SCHEDULE
        repeat = series_of(job).repeat_count(message.occurrence) if scheduled else 0
        placed = series_of(job).placed(message.occurrence) if scheduled else None
        shifted = series_of(job).dst_mark(message.occurrence) if scheduled else None
        retry = effective_retry(action.retry_policy, None if is_error_action else MAIN_ACTION_DEFAULT)
        # An asynchronous target's work is polled (polling.py): GoesOn while it goes on, else the work's result.
        polled = await self.polling.attempt(job, message, action, context, started, self.actions.run_async)
        if isinstance(polled, GoesOn):
            return polled
        result = polled
        ended = self.clock.now()
        deferral = await self.admission.destinations.answered(job, message, action, result)
        if deferral is not None:
            return deferral
        outcome = decide(
            succeeded=result.succeeded,
            is_error_action=is_error_action,
            attempt=message.attempt,
            retry=retry,
            has_error_action=main.error_action is not None,
        )
        follow_up: OccurrenceMessage | None = None
        if outcome.kind == Outcome.RETRY:
            follow_up = message.retry(ended + outcome.delay)
        elif outcome.kind == Outcome.ERROR_ACTION:
            follow_up = message.error_action(ended)
        if follow_up is not None:
            # The recorder sends it, outside this attempt's span: it names the span now.
            follow_up = replace(follow_up, traceparent=current_traceparent() or message.traceparent)
        attempt_done(
            message,
            action.type,
            result.succeeded,
            started,
            retried=outcome.kind == Outcome.RETRY,
            faulted=outcome.faults_occurrence,
        )
        log.info(
            "%s %s attempt %d of %s: %s",
            message.action.value,
            "succeeded" if result.succeeded else "failed",
            message.attempt + 1,
            job.key.resource_id,
            _first_line(result),
        )
        history = HistoryRecord(
            key=job.key,
            execution_id=message.execution_id,
            expected_execution_time=message.fire_instant,
            start_time=started,
            end_time=ended,
            action_name=message.action,
            status=JobExecutionStatus.COMPLETED if result.succeeded else JobExecutionStatus.FAILED,
            message=result.message,
            retry_count=message.attempt,
            repeat_count=repeat,
            occurrence=message.occurrence,
            trigger=message.trigger.value,
            reason=placed,
            dst_shift=shifted,
        )
        history = _with_wait(covering(history, message), message, admitted)
        return Fired(message, job, claim, history, follow_up, outcome, result.succeeded)


def _with_wait(history: HistoryRecord, message: OccurrenceMessage, admitted: Admitted | None) -> HistoryRecord:
    """The first attempt of an occurrence that waited before its first request (for the previous occurrence of
    its job, or for a limit: queued again, or paced in this coroutine) says for what, and how long: from its
    first fire instant to its first request (a polled attempt's history starts there too, `covering`)."""
    if not message.first_attempt:
        return history
    paced_now = admitted.waited_for if admitted is not None and message.poll is None else None
    cause = message.waited_for or paced_now
    if cause is None:
        return history
    return replace(history, waited=max(history.start_time - message.fire_instant, timedelta(0)), waited_for=cause)


def _first_line(result: ActionResult) -> str:
    return result.message.split(" Response Headers:", 1)[0][:200]
