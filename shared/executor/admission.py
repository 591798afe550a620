"""Admission: whether one attempt runs now, decided once at its second, before its action (attempts.py `fire`).

`Admission.admit(message, job, claim, guard)` gives one of three answers:
- `Run(job, admitted)`: run the action with `job` (as read, or as its overlap marker was just written, so the
  recorder's write finds its ETag current). `admitted` (limits.py; None only when there is no action to run)
  holds the concurrency slot if any, the rate limit's turn on the wire and the wait its entry shows; the attempt
  hands it to `release` after its action (a slot is kept while the action's work is polled).
- `Wait(cause, due)`: not now. The claim was given back and the message queued again for `due`, and the Waiting
  ledger entry written when the wait shows: for the previous occurrence of its job (BufferOne), or for a limit.
- `Skip(why, noted)`: never. The claim is done and the ledger entry written, all of it by not_run.py
  (`noted`: the entry's reason; None when there is no entry to write: a retry's, a final job's, a deleted
  collection's). `why` is the reason the telemetry counts (`occurrence_skipped`, emitted here and only here).
After a Wait or a Skip the guard no longer holds the claim. A storage fault raises before any action; the
caller then gives the claim back (the host delivers the batch again).

The checks, in this order; each runs only when the one before let the attempt through:
1. The job at its second, for all but a scheduled occurrence's first attempt (`rechecked`: a backfill, a run-now,
   a retry, an error action; never a poll, whose request went out) and for a taken-over attempt. The batch read
   its jobs up to `early_visibility` before the second (batch.py), which is the dispatcher's occurrences' check.
   A delete, disable or redefinition since then drops the attempt (named in the ledger where the job is left,
   not_run.py `record_superseded`), and so does a claim its first runner finished (the job's recent claims).
   The jobs of one collection asked for within `job_gather` share one read (a query per 14, gathered.py).
2. The job's state (`jobstate.may_run`). 3. The collection's state, read at the second (collection_gate.py), and
   its pause (jobstate.pause `collection_holds`: a scheduled occurrence due before its `until` is held, Paused).
4. The missed-run policy of a scheduled occurrence's first attempt that came late (queued before an outage;
   `jobstate.let_go_late`). If the policy lets it go, its job becomes Completed when it was its series' last.
5. The overlap turn of an occurrence's first attempt (`jobstate.overlap.tracked`: a policy other than Allow, or a
   Skip/BufferOne override): its job's marker written under the ETag (overlap_marker.py). A waiter's message
   is only the fallback: the running occurrence's end releases it (the recorder, `released_message`).
6. Its destination's turn (destinations.py: an open circuit holds it, a push-back's budget paces it), then the
   collection's limits (limits.py): its concurrency slot, then its target host's rate slot.
Why this order: reads that may refuse come before any write, so a refused attempt writes only its note; a late
occurrence that is let go never takes its job's marker; the marker comes before the limits, so a Skip or a
BufferOne turn never holds a slot it would not give back; and slots, the scarce resource, are taken last,
right before the action that holds them. An on-time attempt of an Allow job with no limits costs no request
beyond the collection's shared read.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..clock import Clock
from ..jobstate import LetGo, completed, is_done, let_go_late, marker_until, may_run, skipped_by_overlap, waiting
from ..jobstate.overlap import Turn, effective_policy, tracked
from ..jobstate.pause import collection_holds
from ..keys import CollectionKey, JobKey
from ..leases import Guard
from ..model import JobCollectionState, JobPause, LedgerReason, WaitCause
from ..occurrence import OccurrenceMessage
from ..records import JobRecord
from ..store import Claim, Store, read_modify_write
from ..telemetry import occurrence_skipped
from . import overlap_marker
from .collection_gate import CollectionGate
from .deferrals import Deferral
from .destinations import Destinations
from .fired import action_of, attempt_of
from .gathered import Gathered
from .limits import Admitted, Limits
from .not_run import record_let_go, record_not_run, record_overlap_entry, record_paused, record_superseded

log = logging.getLogger(__name__)

Blocking = Callable[..., Awaitable[Any]]  # (fn, *args) -> awaitable of fn(*args), run off the event loop
RAN = "ran"  # a Skip's `why` when its first runner finished the attempt: it counts as run, not skipped
# Lost races to complete a job let go before the attempt fails (the host delivers it again, and it is decided again).
_COMPLETE_ATTEMPTS = 5


@dataclass(frozen=True)
class Run:
    """The attempt runs now, with `job`; `admitted`: what its limits hold, handed to `release` after its action."""

    job: JobRecord
    admitted: Admitted | None = None


@dataclass(frozen=True)
class Wait:
    """The attempt waits for `cause`: its claim given back, its message queued again for `due`."""

    cause: WaitCause
    due: datetime


@dataclass(frozen=True)
class Skip:
    """The attempt does not run: its claim is done; `noted`: the reason its ledger entry records (None: no entry)."""

    why: str
    noted: LedgerReason | None = None


def rechecked(message: OccurrenceMessage) -> bool:
    """The attempt's job is read again at its second: all but a scheduled occurrence's first attempt (and polls)."""
    if message.poll is not None:
        return False
    return not (message.first_attempt and message.scheduled)


class Admission:
    def __init__(self, store: Store, clock: Clock, io: Blocking, deferrals: Executor) -> None:
        self.store = store
        self.clock = clock
        self.io = io  # runs a blocking (storage) call on the executor's pool and awaits it
        window = store.timings.job_gather.total_seconds()  # an attempt waits this long for its collection's others
        self.jobs: Gathered[CollectionKey, JobKey, JobRecord | None] = Gathered(io, self._read_jobs, window, clock)
        self.collections = CollectionGate(store, clock, io)
        self.limits = Limits(store, clock, self.collections, io, deferrals)
        self.destinations = Destinations(store, clock, io)  # push-back and circuits, shared per destination

    async def admit(self, message: OccurrenceMessage, job: JobRecord, claim: Claim, guard: Guard) -> Run | Wait | Skip:
        """Whether the attempt runs now (the module's docstring says in which order this is decided, and why)."""
        answer = await self._turns(message, job, claim)
        if isinstance(answer, Run):
            return await self._limited(answer.job, message, claim, guard)
        guard.drop(claim.claim_id)
        if isinstance(answer, Skip) and answer.why != RAN:
            occurrence_skipped(message, answer.why)
        return answer

    async def release(self, run: Run, goes_on_until: datetime | None = None) -> None:
        """After the action: the slot `run` holds goes to the next in line, or is kept while its work goes on
        (`goes_on_until`: its next poll's due)."""
        if run.admitted is not None:
            await self.limits.release(run.admitted, goes_on_until)

    async def _turns(self, message: OccurrenceMessage, job: JobRecord, claim: Claim) -> Run | Wait | Skip:
        """Checks 1 to 5; the writes of a Skip or a Wait done."""
        runnable = await self._runnable(message, job, claim.taken_over)
        if isinstance(runnable, Skip):
            await self.io(self.store.claims.complete, claim)
            return runnable
        now = self.clock.now()
        late = let_go_late(runnable, message, now)
        if late is not None:
            await self.io(self._let_go, runnable, message, claim, late, now)
            return Skip("missed", late.reason)
        if not (message.first_attempt and message.poll is None and tracked(runnable, message.overlap)):
            return Run(runnable)  # an Allow job's occurrence, or a later attempt: no marker to keep
        answer: Run | Wait | Skip = await self.io(self._overlap_turn, runnable, message, claim)
        return answer

    async def _runnable(self, message: OccurrenceMessage, job: JobRecord, taken_over: bool) -> JobRecord | Skip:
        """Checks 1 to 3: the job to go on with, or a Skip whose ledger entry was written (its claim not yet done)."""
        if taken_over or rechecked(message):
            current = await self.jobs.ask(message.job.collection_key, message.job)
            if current is None or current.generation != message.generation:
                return await self._superseded(message, current)
            if is_done(current, message.attempt_id):  # a poll's: another poll of its attempt may have ended it
                return Skip(RAN)  # its first runner finished it, then died before its claim said so
            job = current
        collection: JobCollectionState | None = None
        if not may_run(job, attempt_of(message)):
            why = f"job_{job.state.value.lower()}"
        else:
            collection = await self.collections.state(job.key.collection_key)
            if collection == JobCollectionState.ENABLED:
                held = await self._held(message, job.key.collection_key)
                if held is None:
                    return job
                noted = await self.io(record_paused, self.store, job, message, held, self.clock.now())
                return Skip("collection_paused", noted)
            why = "collection_not_enabled"  # a Disabled, Suspended or Deleted collection runs nothing
        now = self.clock.now()
        noted = await self.io(record_not_run, self.store, job, attempt_of(message), message, now, collection)
        return Skip(why, noted)

    async def _held(self, message: OccurrenceMessage, key: CollectionKey) -> JobPause | None:
        """The collection's pause when it holds this attempt back (the read the state came from: no request)."""
        record = await self.collections.latest(key)
        properties = record.definition.properties if record is not None else None
        first = message.first_attempt and message.poll is None and message.scheduled
        return collection_holds(properties.pause if properties else None, message.occurrence, first)

    async def _superseded(self, message: OccurrenceMessage, current: JobRecord | None) -> Skip:
        """The attempt's job was deleted or redefined (a disable and an enable too: each writes a generation)."""
        log.info("occurrence %s: its job was deleted or redefined before its second; dropped", message.claim_id)
        if current is None:
            return Skip("job_changed")
        entries = await self.io(record_superseded, self.store, [(current, message)], self.clock.now())
        return Skip("job_changed", entries[0].reason if entries else None)

    def _read_jobs(self, collection: CollectionKey, keys: list[JobKey]) -> list[JobRecord | None]:
        found = self.store.jobs.get_together(collection, keys)
        # A job the query left out (unreadable) is read alone: it raises.
        return [found[key] if key in found else self.store.jobs.get(key) for key in keys]

    def _let_go(self, job: JobRecord, message: OccurrenceMessage, claim: Claim, late: LetGo, now: datetime) -> None:
        """Check 4's Skip: its ledger entry, its job completed when it was its series' last, its claim done."""
        record_let_go(self.store, job, message, late, now)
        if completed(job, message) is not None:  # its series' last: nothing else completes the job
            read_modify_write(
                lambda: self.store.jobs.get(job.key),
                lambda current: completed(current, message),
                lambda record, _: self.store.jobs.replace(record),
                attempts=_COMPLETE_ATTEMPTS,
                current=job,
            )
        self.store.claims.complete(claim)
        log.info(
            "occurrence %s came %s late (missed): not run, its missed-run policy is %s",
            message.claim_id,
            now - message.due,
            late.policy.value,
        )

    def _overlap_turn(self, job: JobRecord, message: OccurrenceMessage, claim: Claim) -> Run | Wait | Skip:
        """Check 5: the occurrence's turn by its job's marker, written under the job's ETag."""
        now = self.clock.now()
        until = marker_until(message.due, self.store.timings.running_lease)
        me = overlap_marker.ref_of(message)
        decision, written = overlap_marker.begin(self.store.jobs, message.job, me, now, until, job)
        current = written or job
        if decision.turn == Turn.RUN:
            return Run(current)
        marker = current.overlap
        if decision.turn == Turn.SKIP:
            before = marker.running[0].ref if marker.running else (marker.waiting.ref if marker.waiting else None)
            policy = effective_policy(current, message.overlap)
            entry = skipped_by_overlap(current, message.occurrence, message.trigger, policy, before, now)
            record_overlap_entry(self.store, entry, message)
            self.store.claims.complete(claim)
            log.info("occurrence %s skipped: an earlier one of its job still runs (%s)", message.claim_id, policy.value)
            return Skip("overlap", LedgerReason.SKIPPED_BY_OVERLAP)
        assert marker.waiting is not None, "a buffered occurrence is the marker's waiting one"
        if message.first_due is None:  # the first time it waits: a Waiting entry (its first attempt's replaces it)
            entry = waiting(current, message.occurrence, message.trigger, WaitCause.PREVIOUS, now)
            record_overlap_entry(self.store, entry, message)
        self.store.claims.release(claim)
        # Only a fallback, for a lost release: the running one's end queues it long before its place lapses.
        self.store.queue.send(message.waiting(marker.waiting.until, WaitCause.PREVIOUS), now)
        log.info("occurrence %s waits for the previous one of its job (BufferOne)", message.claim_id)
        return Wait(WaitCause.PREVIOUS, marker.waiting.until)

    async def _limited(self, job: JobRecord, message: OccurrenceMessage, claim: Claim, guard: Guard) -> Run | Wait:
        """Check 6: its destination's turn, then the collection's limits for the attempt's action; a Wait once its
        claim is given back and its message queued again (deferrals.py `requeue`)."""
        action = action_of(job, message)
        if action is None:
            return Run(job)
        turn = await self.destinations.admit(job, message, action)
        admitted = turn if isinstance(turn, Deferral) else await self.limits.admit(job, message, action)
        if isinstance(admitted, Admitted):
            if turn is not None and not isinstance(turn, Deferral):  # its destination's turn, then its rule's
                admitted = replace(admitted, before_send=_both(turn, admitted.before_send))
            return Run(job, admitted)
        guard.drop(claim.claim_id)
        await self.limits.requeue(admitted, lambda: self.store.claims.release(claim))
        queued = admitted.message
        assert queued.waited_for is not None, "a deferral's message says what it waits for"
        return Wait(queued.waited_for, queued.due)


def _both(
    first: Callable[[], Awaitable[None]], then: Callable[[], Awaitable[None]] | None
) -> Callable[[], Awaitable[None]]:
    if then is None:
        return first

    async def turns() -> None:
        await first()
        await then()

    return turns
