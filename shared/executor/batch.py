"""The executor's entry point: one queue message, a batch of occurrences due at (about) the same second.

Per delivery, in order:
1. a batch due more than `early_hop` ahead goes back to the queue (long delays hop in steps of 7 days);
2. one watchdog for the whole batch (shared/leases.py; the one its sender queued before it, on a first
   delivery), so a worker dying mid-batch, or a receive lost on its way, loses nothing; a batch past its second
   then waits its turn: a process runs a few late batches at once, earliest first (late_line.py);
3. before the second: the batch's jobs are read together (a query per 14 jobs of one collection) and every
   attempt claimed, in one entity-group transaction per 100 of one collection (store/claims.py), together
   with those of the other batches the process received at the same moment (gathered.py: the first waits
   `batch_gather` for the others), on the executor's pool (the message turned visible a few seconds early for
   this, see store/queues.py); an attempt a runner that may be dead holds is watched for `takeover_wait` (a
   coroutine's sleep, all of them at once, no thread held) and then taken over;
4. at each occurrence's second: the claimed attempts fire side by side (attempts.py), each action a
   coroutine under the process's action limits (shared/actions/limits.py: in flight, per target host); a herd's
   Http attempts get ready ahead of it (`_ready_at`: admission, the request built, its connection made, by
   `ready_each` per attempt of the process due at that second, at most `ready_most`), and their requests are
   written at the second (the request's `before_send` waits for it): otherwise a thousand attempts' admissions
   and connections, a millisecond of the event loop each, would all come after the second, and the last a second
   late;
5. each attempt, as soon as its action returns and whatever its siblings still do, goes to the recorder
   (recorder.py), which writes it within moments together with whatever else answered meanwhile: history,
   what follows (retries and error actions go back to the queue as messages of their own), the job's
   counters and state, which mark it done. A crash after that never runs it again.

The function is `async def`: the Python worker starts every message the host hands over at once and this
coroutine only waits. Actions wait on the event loop and hold no thread; blocking storage calls run on the
attempt lane of the process's threads (shared/threads.py), shared by every batch of the process (the recorder
writes on lanes of its own). A storage fault in any attempt before its action fired
fails the delivery after the others finished, so the host delivers the batch again: attempts that ended
die at their claims, attempts of this delivery resume (the claim names the delivery).

The timings are the settings' (shared/timings.py), as the store carries them; `early_hop` exceeds the queue's
`early_visibility`, so a message that turned visible on time never hops. A second's occurrences come in one
message per due-index shard, and a process receives them within moments of each other, seconds early: so a
collection's jobs are read (its attempts claimed) together across the batches.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TypeVar

from ..actions import ActionRunner
from ..clock import Clock, pause_until
from ..jobstate.overlap import tracked
from ..keys import CollectionKey, JobKey
from ..leases import Guard, Guards
from ..model import JobActionType
from ..occurrence import MalformedMessage, OccurrenceBatch, OccurrenceMessage
from ..records import JobRecord
from ..settings import Settings
from ..store import Claim, Expired, Store
from ..store.claims import Wanted
from ..telemetry import poisoned
from ..threads import ATTEMPT, LIMITS_DEFERRAL, Threads
from .admission import rechecked
from .attempts import Attempts, Expiring, Prepared
from .fired import action_of
from .gathered import Gathered
from .held_report import HeldReport
from .job_order import Turn, turns
from .late_line import LateLine, LateTurn
from .recorder import Recorder

log = logging.getLogger(__name__)

T = TypeVar("T")


class _Unread:
    """A job a query left out (its row could not be read): the batch reads it alone, which raises."""


_UNREAD = _Unread()
Claimed = Prepared | Expiring | BaseException  # an attempt this delivery holds or waits to take over, or a fault


class Executor:
    """`threads`: the process's (shared/threads.py), whose lanes the executor's blocking calls, its recorder's writes
    and its guards' renewals run on. None: threads of its own (an executor built by hand: tests, tools), which
    nothing closes."""

    def __init__(
        self, store: Store, clock: Clock, actions: ActionRunner, settings: Settings, threads: Threads | None = None
    ) -> None:
        self.store = store
        self.clock = clock
        self.timings = store.timings
        threads = threads or Threads(clock)
        self._lane = threads.lane(ATTEMPT)
        self.guards = Guards(store, clock, threads)
        deferrals = threads.lane(LIMITS_DEFERRAL)
        self.attempts = Attempts(store, clock, actions, settings, self.guards, self._blocking, deferrals)
        self.recorder = Recorder(store, clock, threads)
        gather = self.timings.batch_gather.total_seconds()
        self._job_reads: Gathered[CollectionKey, JobKey, JobRecord | None | _Unread] = Gathered(
            self._blocking, self._read_together, gather, clock
        )
        self._claims: Gathered[CollectionKey, Wanted, Claim | Expired | None] = Gathered(
            self._blocking, self._claim_together, gather, clock
        )
        # What waits in the line, reported for health by a loop started when a batch first waits.
        self._late = LateLine(settings.late_batches, on_wait=lambda: self.held.start())
        self.held = HeldReport(store, clock, threads, self._late.held)
        self._herds: Counter[datetime] = Counter()  # the attempts of this process getting ready for each second

    def handle(self, text: str, delivery: str | None = None, dequeue_count: int | None = None) -> None:
        """`handle_async` for callers without an event loop (tools, tests)."""
        asyncio.run(self.handle_async(text, delivery, dequeue_count))

    def run(self, message: OccurrenceMessage | OccurrenceBatch, delivery: str | None = None) -> None:
        """Run a message (one occurrence or a batch) in this thread's own event loop (tools, tests)."""
        batch = message if isinstance(message, OccurrenceBatch) else OccurrenceBatch((message,))
        asyncio.run(self.run_batch(batch, delivery or str(uuid.uuid4())))

    async def handle_async(self, text: str, delivery: str | None = None, dequeue_count: int | None = None) -> None:
        """Entry point of the queue trigger. Raises only for storage faults, which the host retries.

        `delivery` names this delivery: the queue message id, which the host keeps when it redelivers a
        message after a failure, so the redelivery resumes the attempts whose claims it had written.
        `dequeue_count` (the host's) tells a first delivery, which may take over its sender's watchdog as is.
        """
        try:
            batch = OccurrenceBatch.from_json(text)
        except MalformedMessage as exc:
            log.error("dropping a malformed occurrence message to the poison queue: %s", exc)
            await self._blocking(self.store.queue.poison, text)
            poisoned("malformed")
            return
        await self.run_batch(batch, delivery or str(uuid.uuid4()), first_delivery=(dequeue_count or 1) <= 1)

    async def run_batch(self, batch: OccurrenceBatch, runner: str, first_delivery: bool = True) -> None:
        now = self.clock.now()
        if batch.due - now > self.timings.early_hop:
            await self._blocking(self.store.queue.send, batch, now)  # with copies of its own
            await self._blocking(self.guards.discard_copies, batch)
            return
        guard = await self._blocking(self.guards.open, batch, first_delivery)
        place: LateTurn | None = None
        try:
            place = await self._late.turn(batch, self.clock.now())  # late: one of a few at once (late_line.py)
            if place.waited:
                await self._blocking(self.guards.restart, guard)  # waits for a renewal pass under way
            jobs = await self._read_jobs(batch)
            claimed = await self._claim(batch, runner, guard, jobs)
            # Occurrences of a batch share their second (the dispatcher groups them so); fire each at its own.
            # A job's attempts go out in due order (job_order.py); the others side by side.
            order = turns([None if isinstance(c, BaseException) else c.message for c in claimed])
            place.until_out(order)
            done = await asyncio.gather(
                *(self._attempt(c, guard, turn) for c, turn in zip(claimed, order, strict=True)),
                return_exceptions=True,
            )
        except Exception:
            await self._blocking(self.guards.abandon, guard)  # delivered again: the copies cover that (below)
            raise
        except BaseException:
            self.guards.leave(guard)  # cancelled, the process going away: the copies bring the batch back
            raise
        finally:
            if place is not None:
                place.close()
        failures = [r for r in done if isinstance(r, BaseException)]
        if failures:
            # The host delivers the batch again after its visibilityTimeout; but under a lossy spell its update of
            # the message's visibility, or the redelivery's receive, may be lost, and the message then stays hidden
            # for the receive's ten minutes. So the copies stay: the watchdog and the backstop run what is left
            # (the attempts that ended die at their claims), whichever comes first.
            await self._blocking(self.guards.abandon, guard)
            log.warning(
                "%d of %d attempts of a batch failed; the batch is delivered again", len(failures), len(batch.items)
            )
            raise failures[0]
        await self._blocking(self.guards.close, guard)

    async def _read_jobs(self, batch: OccurrenceBatch) -> dict[JobKey, JobRecord | None]:
        """The batch's jobs, read together with those every other batch of the process wants of their
        collections meanwhile (`_read_together`); `jobs_of` reads any other (one whose read failed) by itself."""
        keys = list(dict.fromkeys(item.job for item in batch.items))
        answers = await asyncio.gather(
            *(self._job_reads.ask(key.collection_key, key) for key in keys), return_exceptions=True
        )
        return {k: a for k, a in zip(keys, answers, strict=True) if not isinstance(a, _Unread | BaseException)}

    def _read_together(self, collection: CollectionKey, keys: list[JobKey]) -> list[JobRecord | None | _Unread]:
        """The jobs of one collection that batches asked for within `batch_gather` (`JobStore.get_together`). A job
        whose row the query could not read is `_Unread` (`jobs_of` reads it, and fails)."""
        found = self.store.jobs.get_together(collection, keys)
        return [found.get(key, _UNREAD) for key in keys]

    async def _claim(
        self, batch: OccurrenceBatch, runner: str, guard: Guard, jobs: dict[JobKey, JobRecord | None]
    ) -> list[Claimed]:
        """Each occurrence's attempt claimed for this delivery (or not to run), together with the claims every
        other batch of the process takes in its collection meanwhile (a transaction per 100, `_claim_together`);
        a storage fault is the outcome of its occurrences, which the batch raises after the others ran."""
        checked = await self._blocking(self.attempts.jobs_of, batch.items, jobs)
        to_claim: dict[str, tuple[OccurrenceMessage, JobRecord]] = {}  # by claim id: a copy in the batch is dropped
        for item, job in zip(batch.items, checked, strict=True):
            if job is not None:
                to_claim.setdefault(item.claim_id, (item, job))
        lease = self.guards.lease_until(guard.batch)
        answers = await asyncio.gather(
            *(
                self._claims.ask(item.job.collection_key, Wanted(item.job, claim_id, runner, lease))
                for claim_id, (item, _) in to_claim.items()
            ),
            return_exceptions=True,
        )
        claimed: list[Claimed] = []
        for (item, job), answer in zip(to_claim.values(), answers, strict=True):
            if isinstance(answer, BaseException):
                claimed.append(answer)
            elif (prepared := self.attempts.prepared(item, job, answer, guard)) is not None:
                claimed.append(prepared)
        return claimed

    def _claim_together(self, _: CollectionKey, wanted: list[Wanted]) -> list[Claim | Expired | None]:
        return self.store.claims.claim_each(wanted, self.clock.now())

    async def _attempt(self, claimed: Claimed, guard: Guard, turn: Turn) -> None:
        """At its second (and its turn among its job's attempts), fire a claimed attempt (one whose runner may be
        dead, after `takeover_wait`: taken over); then have it recorded at once (its claim is held until it is)."""
        try:
            await self._attempt_in_turn(claimed, guard, turn)
        finally:
            turn.went_out()  # ended: whatever it did, the job's next attempt need not wait for it

    async def _attempt_in_turn(self, claimed: Claimed, guard: Guard, turn: Turn) -> None:
        if isinstance(claimed, BaseException):
            raise claimed
        prepared: Prepared | None
        if isinstance(claimed, Expiring):
            turn.waits()  # a live runner renews its claim meanwhile, a dead one cannot: idle, it holds no late place
            await self.clock.pause(self.timings.takeover_wait.total_seconds())
            prepared = await self._blocking(self.attempts.take_over, claimed, guard)
        else:
            prepared = claimed
        if prepared is None:
            return
        turn.not_before = await self._ready_at(prepared)
        await turn.wait()
        fired = await self.attempts.fire(prepared.message, prepared, guard, turn)
        if fired is None:
            return
        try:
            await asyncio.wrap_future(self.recorder.record(fired))
        finally:
            guard.drop(fired.claim.claim_id)

    async def _ready_at(self, prepared: Prepared) -> datetime | None:
        """Return when the attempt is to get ready: at its second, or ahead of it when its Http request can be
        (`_ready_ahead`) by `ready_each` per attempt of the process due at that second, at most `ready_most`.
        The second its request waits for, or None when it is due."""
        due = prepared.message.due
        lead = 0.0
        if _ready_ahead(prepared):
            self._herds[due] += 1
            try:
                # A second's batches arrive `early_visibility` before it, and are claimed: by now the herd is counted.
                await pause_until(self.clock, due - self.timings.ready_most)
                lead = self.timings.ready_lead(self._herds[due]).total_seconds()
                await pause_until(self.clock, due - timedelta(seconds=lead))
            finally:
                self._herds[due] -= 1
                if not self._herds[due]:
                    del self._herds[due]
        else:
            await pause_until(self.clock, due)
        return due if lead > 0 and self.clock.now() < due else None

    async def _blocking(self, fn: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._lane, fn, *args)


def _ready_ahead(prepared: Prepared) -> bool:
    """Whether the attempt may get ready before its second: a scheduled occurrence's first attempt (the others read
    their job again at the second, admission.py `rechecked`) whose action is an Http request (which waits for its
    second after its connection, `before_send`), of a job whose overlap is not tracked (its marker's turn is taken
    at the second: taken ahead, a previous occurrence ending meanwhile would not count)."""
    message, action = prepared.message, action_of(prepared.job, prepared.message)
    return (
        action is not None
        and action.type in (JobActionType.HTTP, JobActionType.HTTPS)
        and not rechecked(message)
        and not tracked(prepared.job, message.overlap)
    )
