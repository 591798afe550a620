"""Watchdogs: what lets a live worker pick up, within seconds, the work a dead worker was holding.

The queue trigger's own message cannot do it: the host keeps a received message invisible for ten minutes
(renewing it while the function runs), so a worker that dies holding messages hides them that long. So
every piece of held work has a *watchdog*: a hidden copy of its message that the holder keeps pushing
forward while it is alive and deletes when it is done. When the holder dies, the copy turns visible
seconds later and any live worker takes the work over.

Batches of occurrences (`Guards`): whoever queued the batch sent its watchdog, visible `watchdog_after` past the
batch's second, and a later *backstop* copy just before it (store/queues.py), and the batch names both; what a
delivery, a renewal and the batch's end do with each copy is the table of shared/guard_protocol.py. Claims are
taken with a lease that runs `claim_lease` past the batch's (first) second, so nothing is renewed while the batch
waits for it; from its last second on, while the batch is alive, a renewer pushes every claim's lease and the
watchdog's visibility forward, first `renew_every` after that second, then at periods that double up to
`renew_most`, each lease outlasting its period by `claim_lease - renew_every` (the backstop only when it comes
near, nearer than half `backstop_gap`). When the batch ends, both copies are deleted; when its delivery fails (the
host delivers it again) or the process is going away, both are left to bring it back.
When the process dies, the watchdog turns visible a few seconds later, any live worker receives it, finds the
claims' leases expired and not renewed, takes them over (claims.py) and runs the attempts, or, for an attempt the
first runner had recorded, just marks it done. Should the watchdog's receive be lost as well (hidden ten minutes
while no worker knows of it), the backstop runs the batch `backstop_after` past its second.

Dispatch tasks (`TaskWatchdogs`, below): a task that has due entries to dispatch is guarded the
same way, without claims (a task is idempotent: a second run finds what the first queued and advanced, and
drops it): the minute timer sends a watchdog before each task of the minute it dispatches ahead, the handler takes it
over (or sends one when the task found entries and names none), renews it while it dispatches, deletes it
at the end. A host dying in a dispatch task leaves its entries to the watchdog, `task_watchdog_after` later.
A collection's cascade task (shared/lifecycle/cascade.py) is guarded alike: its sender sends its watchdog first
(store/queues.py `send_kept`), and its handler holds the watchdog while a page of jobs runs and the next
page is queued (`watching`); a page is idempotent, so a watchdog that brings it back after a death runs it again.
`TaskWatchdogs` knows a task only as a `WatchedTask`: one that names its watchdog and can be written without it.

Costs (docs/execution.md, "Cost"): per batch three sends and two deletes; for one held past `renew_every` after
its second, a queue operation per renewal and its claims' share of the renewal pass's transactions: guards due
within `renewal_ahead` of each other are renewed in one pass (a first renewal only at its time), a transaction per
100 claims of one collection whichever batches hold them (`renew_together`). A failed renewal is retried every
`renewal_retry`. The renewers' loops are shared/renewer.py's; every renewal is reckoned on the runtime's clock.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from azure.core.exceptions import HttpResponseError

from .clock import Clock
from .guard_protocol import ON_CLOSE, Act, Delivery, on_open, on_renew
from .occurrence import OccurrenceBatch
from .renewer import Renewer
from .store import Claim, Store
from .store.claims import renewal_groups
from .store.queues import Receipt, WatchedTask, backstop_delay, watchdog_delay
from .threads import ATTEMPT_RENEWER, DISPATCH_RENEWER, LEASE_RENEWAL, Threads

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Guard:
    batch: OccurrenceBatch
    watchdog: Receipt | None = None
    backstop: Receipt | None = None
    backstop_at: float = 0.0  # when the backstop turns visible (monotonic)
    claims: dict[str, Claim] = field(default_factory=dict)  # by claim id: the attempts this delivery holds
    next_renewal: float = 0.0  # when its renewal is due (monotonic)
    renewals: int = 0  # renewals done: each doubles the period to the next, up to `renew_most`
    lost: set[str] = field(default_factory=set)  # claims taken over: a renewal must not take them back
    renewing: threading.Lock = field(default_factory=threading.Lock)
    let_go: bool = False

    def hold(self, claim: Claim) -> None:
        self.claims[claim.claim_id] = claim

    def drop(self, claim_id: str) -> None:
        """The attempt ended: its claim needs no more renewals."""
        self.claims.pop(claim_id, None)


class Guards:
    """Opens, renews and closes the guards of batches."""

    def __init__(self, store: Store, clock: Clock, threads: Threads) -> None:
        self.store = store
        self.clock = clock
        self.timings = store.timings
        # A batch's first renewal never comes early: a batch whose attempts answer soon after their seconds (most)
        # is never renewed, and taken along up to `renewal_ahead` early, a herd's batches were renewed for nothing.
        self._renewer: Renewer[Guard] = Renewer(
            self.renew_together, ATTEMPT_RENEWER, clock, self.timings, threads, lambda g: g.renewals > 0
        )
        self._renewals = threads.lane(LEASE_RENEWAL)

    def lease_until(self, batch: OccurrenceBatch) -> datetime:
        """Where a claim's lease ends when taken or renewed now: `claim_lease` past the batch's (first) second, or
        past now. Reckoned from the first second, not the last (a batch's seconds span up to `batch_span`), so a
        holder that died before it leaves its occurrences to the watchdog that much sooner (issue 37: within 15 s of
        a host being able to run them); the first renewal still comes after the last second (`open`)."""
        return max(batch.due, self.clock.now()) + self.timings.claim_lease

    def open(self, batch: OccurrenceBatch, first_delivery: bool = True) -> Guard:
        """Take over the batch's watchdog and backstop, hide them anew or send a watchdog, as the protocol's table
        says (shared/guard_protocol.py `on_open`); raises on a storage fault (the host then redelivers, nothing
        was claimed)."""
        now, timings = self.clock.now(), self.timings
        # The leases run `claim_lease` past the batch's first second, but the first renewal is due `renew_every`
        # after its last: a batch whose attempts all answer soon after their seconds (most) is never renewed, and
        # a live holder's renewal still comes before the leases lapse (`batch_span` + `renew_every` <
        # `claim_lease`); were it late, nobody takes a claim over before the watchdog's takeover wait has passed.
        wait = max((batch.last_due - now).total_seconds(), 0.0)
        # The backstop never turns visible before `backstop_after` past the batch's second (its sender hid it
        # so, and a push only ever hides it longer): pushed now only when that is near.
        backstop_in = (batch.due + timings.backstop_after - now).total_seconds()
        acts = on_open(
            Delivery(
                names_watchdog=batch.watchdog is not None,
                first_delivery=first_delivery,
                before_second=now < batch.due,
                names_backstop=batch.backstop is not None,
                backstop_near=backstop_in < timings.backstop_gap.total_seconds() / 2,
            )
        )
        watchdog = self._open_watchdog(acts.watchdog, batch, watchdog_delay(batch, now, timings))
        backstop = Receipt(*batch.backstop) if batch.backstop is not None else None
        if acts.backstop is Act.PUSH and backstop is not None:
            backstop_in = backstop_delay(batch, now, timings)
            backstop = self._push(backstop, backstop_in)
        guard = Guard(
            batch,
            watchdog,
            backstop,
            self.clock.monotonic() + backstop_in,
            next_renewal=self.clock.monotonic() + wait + timings.renew_every.total_seconds(),
        )
        self._renewer.add(guard)
        return guard

    def restart(self, guard: Guard) -> None:
        """The batch waited for its turn (executor/late_line.py) and claims now, with leases from now: its renewals
        start afresh, `renew_every` from now, as a batch received now."""
        with guard.renewing:
            guard.renewals = 0
            guard.next_renewal = self.clock.monotonic() + self.timings.renew_every.total_seconds()

    def abandon(self, guard: Guard) -> None:
        """The process is going away mid-batch (cancelled), or the delivery failed (the host delivers it again):
        stop renewing, and leave the copies to bring the batch back."""
        self._renewer.discard(guard)  # ON_ABANDON leaves both copies: nothing more to do

    def leave(self, guard: Guard) -> None:
        """`abandon` without waiting for a renewal in progress: for the event loop, cancelled while the process goes
        away (a renewal's storage calls take up to seconds, and every batch cancelled would wait out its own)."""
        self._renewer.drop(guard)

    def close(self, guard: Guard) -> None:
        """The batch ended: stop renewing and delete its copies (`ON_CLOSE`; best effort: a copy that survives
        finds the attempts done, later, and is dropped)."""
        self._renewer.discard(guard)
        for copy, act in ((guard.watchdog, ON_CLOSE.watchdog), (guard.backstop, ON_CLOSE.backstop)):
            if copy is not None and act is Act.DELETE:
                try:
                    self.store.queue.delete(copy)
                except Exception as error:
                    log.warning("could not delete a watchdog of %s: %s", _name(guard), type(error).__name__)

    def discard_copies(self, batch: OccurrenceBatch) -> None:
        """Delete the copies a batch names, best effort (it hopped back to the queue with copies of its own)."""
        for copy in (batch.watchdog, batch.backstop):
            if copy is not None:
                with contextlib.suppress(Exception):
                    self.store.queue.delete(Receipt(*copy))

    def renew_together(self, guards: Sequence[Guard]) -> list[float | BaseException]:
        """Push the guards' claims' leases and watchdogs' visibility forward (a backstop's when it comes near); per
        guard, the seconds to its next renewal, which its leases outlast by what a first renewal's do (`_period`),
        or what its renewal met. The claims of every guard go together: a transaction per collection (per 100),
        not one per guard and collection (a batch of 100 spans a dozen collections; under a backlog renewals in a
        transaction each were most of a process's CPU, a profile of bench/overload.py), and the Renewer brings the
        renewals due within moments of each other into one pass (timings' `renewal_ahead`)."""
        periods = [self._period(guard) for guard in guards]
        untils = [
            self.lease_until(guard.batch) + timedelta(seconds=period) - self.timings.renew_every
            for guard, period in zip(guards, periods, strict=True)
        ]
        # The copies first, beside the claims' transactions, not after them: in a herd a pass renews thousands of
        # claims while the recorder's transactions fill the storage queue, and watchdogs hidden only after them
        # turned visible first (bench/fire.py's herd of 5,000: a dozen batches taken over, a read and a write each).
        copies = [self._renewals.submit(self._renew_copies, g, u) for g, u in zip(guards, untils, strict=True)]
        held = [(i, c) for i, g in enumerate(guards) for c in list(g.claims.values()) if c.claim_id not in g.lost]
        claims = [claim for _, claim in held]
        finished: set[str] = set()  # marked done meanwhile by its own delivery (a let-go attempt): no takeover

        def renewed(group: list[int]) -> list[bool] | BaseException:
            try:
                group_untils = [untils[held[k][0]] for k in group]
                return self.store.claims.renew_group([claims[k] for k in group], group_untils, finished)
            except Exception as error:
                return error

        groups = renewal_groups(claims)
        failed: dict[int, BaseException] = {}
        for group, answer in zip(groups, self._renewals.map(renewed, groups), strict=True):
            for position, k in enumerate(group):
                i, claim = held[k]
                if isinstance(answer, BaseException):
                    failed.setdefault(i, answer)
                elif not answer[position]:
                    guards[i].lost.add(claim.claim_id)
                    if claim.claim_id not in finished:
                        log.warning("attempt %s was taken over while it ran", claim.claim_id)
        answers: list[float | BaseException] = []
        for i, (guard, copied) in enumerate(zip(guards, copies, strict=True)):
            error = failed.get(i) or copied.result()
            if error is not None:
                log.warning("renewing %s failed: %s", _name(guard), type(error).__name__)
                answers.append(error)
            else:
                guard.renewals += 1
                answers.append(periods[i])
        return answers

    def _renew_copies(self, guard: Guard, until: datetime) -> BaseException | None:
        """The guard's watchdog hidden until its leases end (and `watchdog_margin`), its backstop pushed when near;
        what that met, or None."""
        try:
            hidden = (until + self.timings.watchdog_margin - self.clock.now()).total_seconds()
            gap = self.timings.backstop_gap.total_seconds()
            near = guard.backstop_at - self.clock.monotonic() < gap / 2
            acts = on_renew(guard.watchdog is not None, guard.backstop is not None, near)
            if acts.watchdog is Act.HIDE_ANEW and guard.watchdog is not None:
                guard.watchdog = self._rehide(guard.watchdog, guard.batch, hidden)
            if acts.backstop is Act.PUSH and guard.backstop is not None:
                guard.backstop = self._push(guard.backstop, hidden + gap)
                guard.backstop_at = self.clock.monotonic() + hidden + gap
        except Exception as error:
            return error
        return None

    def _period(self, guard: Guard) -> float:
        """`renew_every`, doubled at each renewal up to `renew_most`. A renewal writes every claim the batch still
        holds: under a backlog a process holds thousands for a minute or more, and renewing each every 2 s was the
        largest single cost of the executor (a fifth of its CPU in a profile of bench/overload.py). A batch whose
        attempts answer soon is never renewed (`open`); one held long is renewed a few times, and a dead holder's
        attempts come back at most `renew_most - renew_every` later than a fresh batch's."""
        every, most = self.timings.renew_every.total_seconds(), self.timings.renew_most.total_seconds()
        return min(every * 2 ** min(guard.renewals, 32), most)

    def _open_watchdog(self, act: Act, batch: OccurrenceBatch, hidden: float) -> Receipt:
        named = Receipt(*batch.watchdog) if batch.watchdog is not None else None
        if act is Act.TAKE_OVER and named is not None:  # its sender hid it until just where our leases end
            return named
        if act is Act.HIDE_ANEW and named is not None:
            return self._rehide(named, batch, hidden)
        if act is Act.SEND and named is None:
            return self.store.queue.send_hidden(batch.without_watchdog(), hidden)
        raise ValueError(f"the guard protocol cannot {act.value} a watchdog of {len(batch.items)} occurrences")

    def _rehide(self, watchdog: Receipt, message: OccurrenceBatch, hidden: float) -> Receipt:
        try:
            return self.store.queue.hide(watchdog, hidden)
        except HttpResponseError as error:
            if error.status_code not in (400, 404):  # PopReceiptMismatch / MessageNotFound
                raise
            # Another worker received it (its pop receipt changed): it found these attempts alive and
            # dropped them. Send a fresh one, so the batch stays covered.
            return self.store.queue.send_hidden(message.without_watchdog(), hidden)

    def _push(self, backstop: Receipt, hidden: float) -> Receipt | None:
        """The backstop hidden anew; None when it is gone (received: its delivery runs the batch, or deleted)."""
        try:
            return self.store.queue.hide(backstop, hidden)
        except HttpResponseError as error:
            if error.status_code not in (400, 404):
                raise
            return None


def _name(guard: Guard) -> str:
    first = guard.batch.items[0].claim_id
    return first if len(guard.batch.items) == 1 else f"the batch of {len(guard.batch.items)} from {first}"


@dataclass(eq=False)
class TaskWatch:
    """A task of the dispatch queue (a dispatch or a cascade task) in the hands of this process, and its watchdog."""

    task: WatchedTask
    watchdog: Receipt
    next_renewal: float  # when its renewal is due (monotonic)
    renewing: threading.Lock = field(default_factory=threading.Lock)
    let_go: bool = False


class TaskWatchdogs:
    """Opens, renews and closes the watchdogs of the dispatch queue's tasks."""

    def __init__(self, store: Store, clock: Clock, threads: Threads) -> None:
        self.store = store
        self.clock = clock
        self.timings = store.timings
        self._renewer: Renewer[TaskWatch] = Renewer(self.renew_each, DISPATCH_RENEWER, clock, self.timings, threads)

    def open(self, task: WatchedTask) -> TaskWatch:
        """Take the task's watchdog over (hidden anew: the task may have waited for a worker) or send one."""
        hidden = self.timings.task_watchdog_after.total_seconds()
        if task.watchdog is not None:
            watchdog = self._rehide(Receipt(*task.watchdog), task)
        else:
            watchdog = self.store.dispatch.send_hidden(task, hidden)
        watch = TaskWatch(task, watchdog, self.clock.monotonic() + self.timings.renew_every.total_seconds())
        self._renewer.add(watch)
        return watch

    @contextlib.contextmanager
    def watching(self, task: WatchedTask) -> Iterator[TaskWatch]:
        """The task's watchdog held while the block runs; closed when it ends; abandoned when it raises (a fault: the
        host delivers the task again, but under a lossy spell that redelivery may be lost for the receive's ten
        minutes, so the watchdog stays to bring the task back) or the process is going away (cancelled)."""
        watch = self.open(task)
        try:
            yield watch
        except BaseException:
            self.abandon(watch)
            raise
        self.close(watch)

    def abandon(self, watch: TaskWatch) -> None:
        """The process is going away mid-task, or the task failed: stop renewing, and leave the watchdog to bring
        the task back."""
        self._renewer.discard(watch)

    def close(self, watch: TaskWatch) -> None:
        self._renewer.discard(watch)
        try:
            self.store.dispatch.delete(watch.watchdog)
        except Exception as error:  # it turns up later, finds the work done, and costs a query or two
            log.warning("could not delete the watchdog of task %s: %s", watch.task, type(error).__name__)

    def drop(self, task: WatchedTask) -> None:
        """A task with nothing to do (no entries to dispatch, a cascade overtaken): its sender's watchdog is not
        needed."""
        if task.watchdog is not None:
            with contextlib.suppress(Exception):
                self.store.dispatch.delete(Receipt(*task.watchdog))

    def renew_each(self, watches: list[TaskWatch]) -> list[float | BaseException]:
        """Each watchdog hidden anew, one after the other (a process holds a few tasks): per watch, the seconds to
        its next renewal, or what its renewal met."""
        answers: list[float | BaseException] = []
        for watch in watches:
            try:
                watch.watchdog = self._rehide(watch.watchdog, watch.task)
                answers.append(self.timings.renew_every.total_seconds())
            except Exception as error:
                log.warning("renewing the watchdog of task %s failed: %s", watch.task, type(error).__name__)
                answers.append(error)
        return answers

    def _rehide(self, watchdog: Receipt, task: WatchedTask) -> Receipt:
        hidden = self.timings.task_watchdog_after.total_seconds()
        try:
            return self.store.dispatch.hide(watchdog, hidden)
        except HttpResponseError as error:
            if error.status_code not in (400, 404):
                raise
            # Gone: another worker received it and runs the task too (harmless, a task is idempotent), or a
            # delivery before this one deleted it. This delivery keeps a watchdog of its own.
            return self.store.dispatch.send_hidden(task, hidden)
