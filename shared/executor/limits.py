"""A collection's limits at an attempt (issue 27): its maxConcurrentExecutions slot, then its target host's rate
slot, taken right before the action (after the overlap check, before the egress guard: docs/decisions.md,
"Overlap, limits, long-running completion, spread"). The rules are jobstate's (concurrency.py, pacing.py), the
rows store/limits.py's, taken under their ETag by limit_slots.py; this module is their I/O shell in the executor.

- `admit`: the attempt may start now (`Admitted`: maybe holding a slot, and how long it waited), or it must wait
  longer than a coroutine should (`Deferral`). A collection without either member costs nothing here: its
  definition comes with the state read the attempt makes anyway (collection_gate.py).
The timings named `like_this` are the settings' (shared/timings.py), as the store carries them.

- Concurrency: the attempts of a process asking within `limits_gather` (a herd's, whatever its batch) ask the
  collection's gate together, one read and one write of its row, releases of answered attempts included. An
  attempt without a slot is told its place in the line and waits here up to `concurrency_wait`
  (`_concurrency_slot`: woken at once by a slot given back in this process, else reading the row every
  `concurrency_peek` and asking again only when the read shows a slot for its place); then it is queued again
  for `asks_again_after(place)` (jobstate/concurrency.py; under the line's `waiter_lease`, so it keeps its
  place). Slots go out in line order on every instance. A poll of an attempt's asynchronous work asks for none:
  the attempt's slot is kept across its polls (`release` with the next poll's due keeps it to `slot_lease` past
  that) and given back at the end.
- Rate: the attempts asking within `limits_gather` reserve consecutive slots of the rule's pacer in one write, in
  due order (fire instant, then claim id). A slot within `early_hop` is waited for here; a later one is queued
  again with its due at the slot and marked paced (it does not reserve twice). Retries and error actions take
  slots too; the message of a concurrency wait drops its rate slot (it reserves anew when it gets a slot).
  A poll is paced by the host it polls (its Location's). Slots are paced at PACING_SHARE (97 %) of the rate,
  so a few ms of jitter never shows as one request too many in a one-second window. The attempt's last step
  of pacing is taken on the wire (wire_turns.py): it waits here until `connect_lead` before its slot, connects,
  and is written when its slot has come and the rule's window in this process allows (`Admitted.before_send`,
  awaited by the action right before it writes the request).
- `requeue`: the deferred attempt queued again (deferrals.py).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from ..clock import Clock, pause_until
from ..jobstate import pacer_key
from ..jobstate.concurrency import Acquired, GateState, SlotRequest, asks_again_after, limit_of, worth_asking
from ..jobstate.ledger import WAIT_SHOWN_AFTER
from ..jobstate.pacing import rule_of
from ..keys import CollectionKey
from ..model import JobErrorAction, WaitCause
from ..occurrence import OccurrenceMessage
from ..records import JobRecord
from ..store import Store
from . import limit_slots
from .collection_gate import CollectionGate
from .deferrals import Deferral, Deferrals
from .gathered import Gathered
from .wire_turns import WireTurns

log = logging.getLogger(__name__)
T = TypeVar("T")

# Requests are paced at this share of a rule's rate: slots exactly 1/rate apart would put rate + 1 requests in a
# one-second window as soon as one of them is sent (or arrives) a millisecond late; 3 % leaves about 30 ms of jitter
# per second of slots (rate x 1/(0.97 rate) = 1.031 s for rate requests). A share of the rate, not a timing.
PACING_SHARE = 0.97


@dataclass(frozen=True)
class Admitted:
    """An attempt that may start now."""

    collection: CollectionKey
    slot: str | None = None  # the claim id holding a concurrency slot: released after the answer
    waited_for: WaitCause | None = None  # a first attempt's wait (queued again, or paced in its coroutine)
    before_send: Callable[[], Awaitable[None]] | None = None  # its rate limit's turn on the wire (wire_turns.py)


@dataclass(frozen=True)
class _Acquire:
    request: SlotRequest
    limit: int


@dataclass(frozen=True)
class _Release:
    holder: str


_GateAsk = _Acquire | _Release


class Limits:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        collections: CollectionGate,
        io: Callable[..., Awaitable[Any]],
        deferrals: Executor,
    ) -> None:
        self.store = store
        self.clock = clock
        self.collections = collections
        self.io = io
        self.timings = store.timings
        gather = self.timings.limits_gather.total_seconds()  # a herd's asks arrive within a few ms
        self._gates: Gathered[CollectionKey, _GateAsk, Acquired | None] = Gathered(io, self._settle, gather, clock)
        self._pacers: Gathered[tuple[CollectionKey, str, float], SlotRequest, datetime] = Gathered(
            io, self._reserve, gather, clock
        )
        self._deferred = Deferrals(store, clock, io, deferrals)
        self._wire = WireTurns(clock)
        self._peeks: Gathered[CollectionKey, None, GateState] = Gathered(io, self._peek, gather, clock)
        # Per event loop and collection: resolved when this process gives a slot back (its waiters ask at once).
        self._signals: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[CollectionKey, asyncio.Future[None]]
        ] = weakref.WeakKeyDictionary()

    async def admit(self, job: JobRecord, message: OccurrenceMessage, action: JobErrorAction) -> Admitted | Deferral:
        """Take the attempt's concurrency slot and rate slot, waiting for a near one; a Deferral when it must wait
        longer (it holds no slot then). A poll's message asks for no concurrency slot (its attempt holds one since
        its first request) and takes the rate slot of the host it polls."""
        key = job.key.collection_key
        record = await self.collections.latest(key)  # read for its state just before: no request of its own
        limit, rule = limit_of(record), rule_of(record, action, message)
        if limit is None and rule is None:
            return _admitted(key, None, message, None)
        holder, fire = message.claim_id, message.fire_instant
        slot: str | None = None
        cause: WaitCause | None = None
        if limit is not None and message.poll is not None:
            slot = message.attempt_id  # kept across the polls (`release`), given back at the work's end
        elif limit is not None:
            place = await self._concurrency_slot(job, message, limit)
            if isinstance(place, int):
                due = self.clock.now() + asks_again_after(place, self.timings)
                return Deferral(job, message.waiting(due, WaitCause.CONCURRENCY))
            cause = place
            slot = holder
        before_send: Callable[[], Awaitable[None]] | None = None
        if rule is not None:
            rate = rule.requests_per_second * PACING_SHARE
            asked = self.clock.now()
            start = (
                message.due
                if message.paced and message.waited_for == WaitCause.RATE_LIMIT  # its slot of this rule, not a budget's
                else await self._pacers.ask((key, pacer_key(rule), rate), SlotRequest(holder, fire))
            )
            if start - asked > self.timings.early_hop:
                if slot is not None and message.poll is not None:
                    await self.keep(key, slot, start)
                elif slot is not None:
                    await self.release_slot(key, slot)
                return Deferral(job, message.waiting(start, WaitCause.RATE_LIMIT, paced=True))
            if start - asked > timedelta(milliseconds=1):
                cause = cause or WaitCause.RATE_LIMIT
            # It connects this long before its slot (its turn on the wire waits for the slot itself).
            await pause_until(self.clock, start - self.timings.connect_lead)
            before_send = self._wire_turn((key, pacer_key(rule)), rule.requests_per_second, start, holder)
        return _admitted(key, slot, message, cause, before_send)

    async def _concurrency_slot(self, job: JobRecord, message: OccurrenceMessage, limit: int) -> WaitCause | None | int:
        """Once the attempt holds a slot of the collection's gate: WaitCause.CONCURRENCY when it waited for it, else
        None. Else its place in the line when it stops waiting here (`concurrency_wait`) to be queued again. While
        it waits, a slot given back in this process wakes it at once; one given back elsewhere is seen by a read
        of the gate row every `concurrency_peek` (gathered with this process's other waiters): only a read that shows a
        slot for its place (`worth_asking`) asks (writes) again. A first attempt that waits here longer than
        WAIT_SHOWN_AFTER has its Waiting entry written meanwhile, as one queued again has."""
        key, request = job.key.collection_key, SlotRequest(message.claim_id, message.fire_instant)
        granted = await self._gates.ask(key, _Acquire(request, limit))
        assert granted is not None
        if request.holder in granted.granted:
            return None
        place = granted.waiting.get(request.holder, len(granted.waiting) + 1)
        timings = self.timings
        give_up = self.clock.monotonic() + timings.concurrency_wait.total_seconds()
        shown = False
        while self.clock.monotonic() < give_up:
            if not shown and self.clock.now() - message.fire_instant > WAIT_SHOWN_AFTER:
                shown = True
                await self._deferred.show_waiting(job, replace(message, waited_for=WaitCause.CONCURRENCY))
            if not await self._freed(key, timings.concurrency_peek.total_seconds()):
                state = await self._peeks.ask(key, None)
                now = self.clock.now()
                renew_within = timings.waiter_lease - timings.concurrency_wait
                if not worth_asking(state, limit, request.holder, now, renew_within):
                    continue
            granted = await self._gates.ask(key, _Acquire(request, limit))
            assert granted is not None
            if request.holder in granted.granted:
                return WaitCause.CONCURRENCY
            place = granted.waiting.get(request.holder, len(granted.waiting) + 1)
        return place

    async def _freed(self, key: CollectionKey, timeout: float) -> bool:
        """Whether a slot of the collection was given back in this process within `timeout` seconds."""
        loop = asyncio.get_running_loop()
        signals = self._signals.setdefault(loop, {})
        signal = signals.get(key)
        if signal is None:
            signal = signals[key] = loop.create_future()
        # The timeout on the clock; the signal is shared by the collection's waiters, so never cancelled here.
        timer = loop.create_task(self.clock.pause(timeout))
        try:
            await asyncio.wait((signal, timer), return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
        return signal.done()

    def _signal_freed(self, key: CollectionKey) -> None:
        signal = self._signals.get(asyncio.get_running_loop(), {}).pop(key, None)
        if signal is not None and not signal.done():
            signal.set_result(None)

    async def release(self, admitted: Admitted, goes_on_until: datetime | None = None) -> None:
        """The attempt answered: its concurrency slot (if it holds one) goes to the next in line; unless its work
        goes on (`goes_on_until`: its next poll's due), then the slot is kept for it."""
        if admitted.slot is None:
            return
        if goes_on_until is not None:
            await self.keep(admitted.collection, admitted.slot, goes_on_until)
        else:
            await self.release_slot(admitted.collection, admitted.slot)

    async def keep(self, collection: CollectionKey, holder: str, until: datetime) -> None:
        """Best effort: the holder's slot held until `slot_lease` after `until` (its next request's due), so a slot
        held across polls outlasts any pollingInterval. A slot that lapsed meanwhile (a host down longer than
        that) is gone: the work goes on without it."""
        gates = self.store.gates
        assert gates is not None, "a store with the Limits table"
        now = self.clock.now()
        try:
            lease = max(until - now, timedelta(0)) + self.timings.slot_lease
            lost = await self.io(limit_slots.renew, gates, self.timings, collection, [holder], now, lease)
        except Exception:
            log.exception("the concurrency slot of %s was not kept; it lapses", holder)
            return
        if lost:
            log.warning("the concurrency slot of %s had lapsed; its work goes on without one", holder)

    async def release_slot(self, collection: CollectionKey, holder: str) -> None:
        """Best effort: a release that fails leaves the slot to lapse (`slot_lease`)."""
        try:
            await self._gates.ask(collection, _Release(holder))
        except Exception:
            log.exception("the concurrency slot of %s was not released; it lapses", holder)
            return
        self._signal_freed(collection)  # this process's waiters ask at once

    async def requeue(self, deferral: Deferral, give_back: Callable[[], object]) -> None:
        """The deferred attempt queued again, its claim given back first (deferrals.py)."""
        await self._deferred.requeue(deferral, give_back)

    def _wire_turn(
        self, key: tuple[CollectionKey, str], rate: float, slot: datetime, holder: str
    ) -> Callable[[], Awaitable[None]]:
        """The request's turn on the wire under its rule (wire_turns.py), for the action to await before it writes."""

        async def turn() -> None:
            await self._wire.turn(key, rate, PACING_SHARE, slot, holder)

        return turn

    def _settle(self, collection: CollectionKey, asks: list[_GateAsk]) -> list[Acquired | None]:
        """Releases and requests of one collection's gate, in one read and one write (the latest limit asked)."""
        gates = self.store.gates
        assert gates is not None, "a store with the Limits table"
        done = [ask.holder for ask in asks if isinstance(ask, _Release)]
        requests = [ask for ask in asks if isinstance(ask, _Acquire)]
        now = self.clock.now()
        if not requests:
            limit_slots.release(gates, self.timings, collection, done, now)
            return [None] * len(asks)
        limit, wanted = requests[-1].limit, [ask.request for ask in requests]
        answer = limit_slots.settle(gates, self.timings, collection, limit, done, wanted, now)
        return [answer if isinstance(ask, _Acquire) else None for ask in asks]

    def _peek(self, collection: CollectionKey, asks: list[None]) -> list[GateState]:
        gates = self.store.gates
        assert gates is not None, "a store with the Limits table"
        state = gates.state(collection)
        return [state] * len(asks)

    def _reserve(self, key: tuple[CollectionKey, str, float], requests: list[SlotRequest]) -> list[datetime]:
        pacers = self.store.pacers
        assert pacers is not None, "a store with the Limits table"
        collection, rule, rate = key
        order = sorted(range(len(requests)), key=lambda i: (requests[i].due, requests[i].holder))
        slots = limit_slots.reserve(pacers, self.timings, collection, rule, len(requests), rate, self.clock.now())
        answers: list[datetime] = [slots[0]] * len(requests)
        for slot, index in zip(slots, order, strict=True):
            answers[index] = slot
        return answers


def _admitted(
    key: CollectionKey,
    slot: str | None,
    message: OccurrenceMessage,
    cause: WaitCause | None,
    before_send: Callable[[], Awaitable[None]] | None = None,
) -> Admitted:
    """Only an occurrence's first attempt says it waited (its ledger entry shows it)."""
    waited_for = message.waited_for or cause
    return Admitted(key, slot, waited_for if message.first_attempt else None, before_send)
