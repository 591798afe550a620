"""A collection's limits at an attempt (issue 27): its maxConcurrentExecutions slot, then its target host's rate
slot, taken right before the action (after the overlap check, before the egress guard: docs/decisions.md,
"Overlap, limits, long-running completion, spread"). The rules are jobstate's (concurrency.py, pacing.py), the
rows store/limits.py's; this module is their I/O shell in the executor.

- `admit`: the attempt may start now (`Admitted`: maybe holding a slot, and how long it waited), or it must wait
  longer than a coroutine should (`Deferral`). A collection without either member costs nothing here: its
  definition comes with the state read the attempt makes anyway (collection_gate.py).
- Concurrency: the attempts of a process asking within GATHER (a herd's, whatever its batch) ask the
  collection's gate together, one read and one write of its row, releases of answered attempts included. An
  attempt without a slot is told its place in the line and is queued again for `backoff(place)` (under the
  line's WAITER_LEASE, so it keeps its place); slots go out in line order on every instance.
- Rate: the attempts asking within GATHER reserve consecutive slots of the rule's pacer in one write, in
  due order (fire instant, then claim id). A slot within EARLY_HOP is waited for here; a later one is queued
  again with its due at the slot and marked paced (it does not reserve twice). Retries and error actions take
  slots too; the message of a concurrency wait drops its rate slot (it reserves anew when it gets a slot).
  Slots are paced at PACING_SHARE (98 %) of the rate, so a few ms of jitter never shows as one request too
  many in a one-second window. On top of the slots, a process spaces the requests it sends under one rule at
  least 1/rate apart (`_turn`): a stalled event loop would otherwise send the slots it overslept at once.
- `requeue`: the deferred attempt's Waiting ledger entry (first attempts of a wait longer than
  WAIT_SHOWN_AFTER), then its message, queued with the others deferred meanwhile, a batch per second of due.
  Its claim is given back before (attempts.py), so the message claims it again when it comes.
- For long-running completion (phase 2a): `release` ends a slot, `renew` keeps slots held across polls, and
  `rate_slot` reserves a poll's rate slot.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..clock import Clock
from ..jobstate import pacer_key, rule_for, target_host
from ..jobstate.concurrency import WAITER_LEASE, Acquired, SlotRequest
from ..jobstate.ledger import WAIT_SHOWN_AFTER, waiting
from ..jobstate.pacing import spacing
from ..keys import CollectionKey
from ..model import JobActionType, JobErrorAction, JobHistoryActionName, TargetRateLimit, WaitCause
from ..occurrence import BATCH_MAX, OccurrenceBatch, OccurrenceMessage
from ..records import CollectionRecord, JobRecord
from ..store import Store
from .collection_gate import CollectionGate
from .gathered import Gathered

log = logging.getLogger(__name__)

GATHER = 0.02  # seconds an ask waits for others to share its storage call: a herd arrives within a few ms
# A rate slot nearer than this is waited for in the coroutine; a later one is queued (the executor's EARLY_HOP).
EARLY_HOP = timedelta(seconds=8)
# Requests are paced at this share of a rule's rate: slots exactly 1/rate apart would put rate + 1 requests in a
# one-second window as soon as one of them is sent (or arrives) a millisecond late; 2 % leaves 20 ms of jitter.
PACING_SHARE = 0.98
QUEUE_GATHER = 0.05  # seconds a deferred message waits for others to share a queue message
BACKOFF_FIRST = 1.0  # seconds before the front of a concurrency line asks again
BACKOFF_STEP = 0.25  # more per place behind it
BACKOFF_MAX = 15.0  # at most: well inside WAITER_LEASE, delivery's few seconds of lateness included
assert WAITER_LEASE.total_seconds() >= BACKOFF_MAX * 2


def backoff(place: int) -> timedelta:
    """When an attempt at `place` in a concurrency line asks again: soon at the front, later behind."""
    return timedelta(seconds=min(BACKOFF_FIRST + BACKOFF_STEP * max(place - 1, 0), BACKOFF_MAX))


@dataclass(frozen=True)
class Admitted:
    """An attempt that may start now."""

    collection: CollectionKey
    slot: str | None = None  # the claim id holding a concurrency slot: released after the answer
    waited_for: WaitCause | None = None  # a first attempt's wait (queued again, or paced in its coroutine)


@dataclass(frozen=True)
class Deferral:
    """An attempt that waits longer: its message queued again (`requeue`) once its claim is given back."""

    job: JobRecord
    message: OccurrenceMessage  # the attempt as queued again: due later, its first fire instant kept


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
        self, store: Store, clock: Clock, collections: CollectionGate, io: Callable[..., Awaitable[Any]]
    ) -> None:
        self.store = store
        self.clock = clock
        self.collections = collections
        self.io = io
        self._gates: Gathered[CollectionKey, _GateAsk, Acquired | None] = Gathered(io, self._settle, GATHER)
        self._pacers: Gathered[tuple[CollectionKey, str, float], SlotRequest, datetime] = Gathered(
            io, self._reserve, GATHER
        )
        self._queue: Gathered[None, OccurrenceMessage, None] = Gathered(io, self._send, QUEUE_GATHER)
        self._turns: dict[tuple[CollectionKey, str], float] = {}  # a rule's latest request here (monotonic)

    async def admit(self, job: JobRecord, message: OccurrenceMessage, action: JobErrorAction) -> Admitted | Deferral:
        """Take the attempt's concurrency slot and rate slot, waiting for a near one; a Deferral when it must wait
        longer (it holds no slot then)."""
        key = job.key.collection_key
        record = await self.collections.latest(key)  # read for its state just before: no request of its own
        limit, rule = _limit_of(record), _rule_of(record, action)
        if limit is None and rule is None:
            return _admitted(key, None, message, None)
        holder, fire = message.claim_id, message.fire_instant
        slot: str | None = None
        if limit is not None:
            granted = await self._gates.ask(key, _Acquire(SlotRequest(holder, fire), limit))
            assert granted is not None
            if holder not in granted.granted:
                place = granted.waiting.get(holder, len(granted.waiting) + 1)
                due = self.clock.now() + backoff(place)
                return Deferral(job, message.waiting(due, WaitCause.CONCURRENCY))
            slot = holder
        cause: WaitCause | None = None
        if rule is not None:
            rate = rule.requests_per_second * PACING_SHARE
            asked = self.clock.now()
            start = (
                message.due
                if message.paced
                else await self._pacers.ask((key, pacer_key(rule), rate), SlotRequest(holder, fire))
            )
            if start - asked > EARLY_HOP:
                if slot is not None:
                    await self.release_slot(key, slot)
                return Deferral(job, message.waiting(start, WaitCause.RATE_LIMIT, paced=True))
            if start - asked > timedelta(milliseconds=1):
                cause = WaitCause.RATE_LIMIT
            await self._sleep_until(start)
            # Spaced at the rule's own rate (slots are at PACING_SHARE of it): a process that fell behind its slots
            # catches up a little, never faster than the rate.
            await self._turn((key, pacer_key(rule)), spacing(rule.requests_per_second).total_seconds())
        return _admitted(key, slot, message, cause)

    async def release(self, admitted: Admitted) -> None:
        """The attempt answered: its concurrency slot (if it holds one) goes to the next in line."""
        if admitted.slot is not None:
            await self.release_slot(admitted.collection, admitted.slot)

    async def release_slot(self, collection: CollectionKey, holder: str) -> None:
        """Best effort: a release that fails leaves the slot to lapse (SLOT_LEASE)."""
        try:
            await self._gates.ask(collection, _Release(holder))
        except Exception:
            log.exception("the concurrency slot of %s was not released; it lapses", holder)

    async def renew(self, collection: CollectionKey, holders: Iterable[str]) -> frozenset[str]:
        """Slots held for SLOT_LEASE more (an attempt whose work goes on: polls); the holders whose slot lapsed."""
        gates = self.store.gates
        assert gates is not None
        lost: frozenset[str] = await self.io(gates.renew, collection, list(holders), self.clock.now())
        return lost

    async def rate_slot(self, collection: CollectionKey, uri: str, holder: str, due: datetime) -> datetime | None:
        """When a request to `uri` (a poll) may start under the collection's rate limits: a slot reserved for it
        (gathered with the others asked meanwhile, in due order), or None when no rule paces its host."""
        rule = _rule_for_uri(await self.collections.record(collection), uri)
        if rule is None:
            return None
        rate = rule.requests_per_second * PACING_SHARE
        return await self._pacers.ask((collection, pacer_key(rule), rate), SlotRequest(holder, due))

    async def requeue(self, deferral: Deferral) -> None:
        """Queue the deferred attempt again (its claim already given back), after its Waiting entry when due."""
        message = deferral.message
        fire = message.fire_instant
        first = message.action == JobHistoryActionName.MAIN_ACTION and message.attempt == 0
        if first and message.waited_for is not None and message.due - fire > WAIT_SHOWN_AFTER:
            entry = waiting(deferral.job, message.occurrence, message.trigger, message.waited_for, fire)
            try:
                # Before the message: the attempt's own entry, written when it runs, must come after.
                await self.io(self.store.history.add_all, [], [entry])
            except Exception:
                log.exception("the Waiting entry of %s was not written", message.claim_id)
        await self._queue.ask(None, message)

    async def _sleep_until(self, instant: datetime) -> None:
        wait = (instant - self.clock.now()).total_seconds()
        if wait > 0:
            await asyncio.sleep(wait)

    async def _turn(self, key: tuple[CollectionKey, str], gap: float) -> None:
        """At least `gap` seconds after this process's previous request under the rule, as they were sent (a
        stalled loop's overslept requests go one by one, not at once)."""
        while True:
            now = time.monotonic()
            last = self._turns.get(key)
            if last is None or now >= last + gap:
                self._turns[key] = now
                return
            await asyncio.sleep(last + gap - now)

    def _settle(self, collection: CollectionKey, asks: list[_GateAsk]) -> list[Acquired | None]:
        """Releases and requests of one collection's gate, in one read and one write (the latest limit asked)."""
        gates = self.store.gates
        assert gates is not None, "a store with the Limits table"
        done = [ask.holder for ask in asks if isinstance(ask, _Release)]
        requests = [ask for ask in asks if isinstance(ask, _Acquire)]
        now = self.clock.now()
        if not requests:
            gates.release(collection, done, now)
            return [None] * len(asks)
        answer = gates.settle(collection, requests[-1].limit, done, [ask.request for ask in requests], now)
        return [answer if isinstance(ask, _Acquire) else None for ask in asks]

    def _reserve(self, key: tuple[CollectionKey, str, float], requests: list[SlotRequest]) -> list[datetime]:
        pacers = self.store.pacers
        assert pacers is not None, "a store with the Limits table"
        collection, rule, rate = key
        order = sorted(range(len(requests)), key=lambda i: (requests[i].due, requests[i].holder))
        slots = pacers.reserve(collection, rule, len(requests), rate, self.clock.now())
        answers: list[datetime] = [slots[0]] * len(requests)
        for slot, index in zip(slots, order, strict=True):
            answers[index] = slot
        return answers

    def _send(self, _: None, messages: list[OccurrenceMessage]) -> list[None]:
        """The deferred messages, a batch per second of due (each fires at its own due), in due order."""
        now = self.clock.now()
        for batch in _by_second(messages):
            self.store.queue.send(batch, now)
        return [None] * len(messages)


def _by_second(messages: list[OccurrenceMessage]) -> list[OccurrenceBatch]:
    groups: dict[int, list[OccurrenceMessage]] = {}
    for message in sorted(messages, key=lambda m: m.due):
        groups.setdefault(math.floor(message.due.timestamp()), []).append(message)
    return [
        OccurrenceBatch(tuple(group[i : i + BATCH_MAX]))
        for group in groups.values()
        for i in range(0, len(group), BATCH_MAX)
    ]


def _limit_of(record: CollectionRecord | None) -> int | None:
    properties = record.definition.properties if record is not None else None
    return properties.max_concurrent_executions if properties is not None else None


def _rule_of(record: CollectionRecord | None, action: JobErrorAction) -> TargetRateLimit | None:
    if action.type not in (JobActionType.HTTP, JobActionType.HTTPS) or action.request is None:
        return None
    return _rule_for_uri(record, action.request.uri)


def _rule_for_uri(record: CollectionRecord | None, uri: str) -> TargetRateLimit | None:
    properties = record.definition.properties if record is not None else None
    rules = properties.target_rate_limits if properties is not None else None
    host = target_host(uri) if rules else None
    return rule_for(host, rules) if host else None


def _admitted(key: CollectionKey, slot: str | None, message: OccurrenceMessage, cause: WaitCause | None) -> Admitted:
    """Only an occurrence's first attempt says it waited (its ledger entry shows it)."""
    first = message.action == JobHistoryActionName.MAIN_ACTION and message.attempt == 0
    waited_for = message.waited_for or cause
    return Admitted(key, slot, waited_for if first else None)
