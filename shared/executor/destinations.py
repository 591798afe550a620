"""Destinations that push back or fail (issue 40): the executor's I/O shell over jobstate/pushback.py (a 429 or
503 tightens the destination's budget, shared by every job and instance) and jobstate/circuit.py (sustained
failures open its circuit; one probe at a time closes it), over one row per destination (store/destinations.py).

- `admit`, at the attempt's second, before its collection's limits (admission.py): an attempt to a destination
  this process knows to push back or fail takes its turn: held while the circuit is open (the probe goes), or a
  slot of the budget. A near slot is waited for here; a later one, or an open circuit, defers the attempt (queued
  again, ledger Deferred naming the destination and until when). Its retries are untouched.
- `answered`, after the action: a 429 or 503 defers the attempt to its slot after the Retry-After, instead of
  failing it (its retry count and error action untouched), while the occurrence is within `deferral_deadline` of
  its second; past it the answer is the failure it says. A failure that counts (a timeout, a refused connection, a
  5xx other than 503) is counted by the circuit; a success after failures closes it.
Cost: a destination this process never saw push back or fail costs nothing (no read, no write); one it knows is
read at most every `pressure_refresh` and written once per gathered herd of asks (`limits_gather`), as a pacer is.
Another instance learns of a destination's trouble from its own first push-back or failure there, then shares the
row. Polls (their Location's host) are neither paced nor held here.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..actions import ActionResult
from ..clock import Clock, pause_until
from ..jobstate.circuit import CircuitRules, Held, answered, circuit_of, gate
from ..jobstate.pushback import DestinationState, destination_key, learned, pushed_back, reserve, widened
from ..model import JobErrorAction, WaitCause, format_utc
from ..occurrence import OccurrenceMessage
from ..records import JobRecord
from ..store import ConcurrencyError, Store, read_modify_write
from ..store.destinations import DestinationRow
from ..store.tables import backoff
from ..telemetry import circuit_changed, destination_deferred
from .deferrals import Deferral
from .gathered import Gathered
from .limits import PACING_SHARE
from .wire_turns import WireTurns

log = logging.getLogger(__name__)
ATTEMPTS = 60  # lost ETag races before giving up: a herd of instances may race for one row


@dataclass(frozen=True)
class _Turn:
    holder: str
    paced: bool  # queued again at its slot of this budget: it takes no other


@dataclass(frozen=True)
class _Answer:
    holder: str
    failed: bool  # counts for the circuit
    status: int | None = None  # a push-back's
    retry_after: float | None = None
    accepted: int = 0
    paced: bool = False  # the refused request had waited for its slot of the budget
    learning: bool = False  # a success while the hold lasts: what the destination accepts (`learned`)


@dataclass(frozen=True)
class _Slot:
    at: datetime
    probe: bool = False
    rate: float | None = None  # the budget the slot was taken under (None: no budget)


_Ask = _Turn | _Answer


@dataclass
class _Known:
    state: DestinationState
    read_at: float  # monotonic


class Destinations:
    def __init__(self, store: Store, clock: Clock, io: Callable[..., Awaitable[Any]]) -> None:
        self.store = store
        self.clock = clock
        timings = store.timings
        self.timings = timings
        self.rules = CircuitRules(
            timings.circuit_sustained, timings.circuit_probe_every, timings.circuit_answer_wait, timings.pressure_forget
        )
        gather = timings.limits_gather.total_seconds()
        self._asks: Gathered[str, _Ask, _Slot | Held | None] = Gathered(io, self._settle, gather, clock)
        # Answers wait for no window: an attempt's end is not held back by its destination's row (those that come
        # while a write runs share the next one).
        self._answers: Gathered[str, _Ask, _Slot | Held | None] = Gathered(io, self._settle, 0.0, clock)
        # A herd's attempts that find the row stale share one read.
        self._reads: Gathered[str, None, DestinationRow] = Gathered(io, self._read, 0.0, clock)
        self._known: dict[str, _Known] = {}
        self._wire = WireTurns(clock)
        self._accepted: dict[str, deque[datetime]] = {}

    async def admit(
        self, job: JobRecord, message: OccurrenceMessage, action: JobErrorAction
    ) -> Deferral | Callable[[], Awaitable[None]] | None:
        """None: the attempt goes now; its deferral (it holds nothing); or, when it goes at a slot of its
        destination's budget, its turn on the wire (wire_turns.py: the action awaits it right before it writes the
        request, so requests that reached their slots late never go out bunched)."""
        destination = destination_key(action, message)
        if destination is None or message.poll is not None or self.store.destinations is None:
            return None
        known = self._known.get(destination)
        if known is None:
            return None
        now = self.clock.now()
        if now - message.fire_instant > self.timings.deferral_deadline:
            return None  # past its deadline it goes, and its answer counts as it is
        if self.clock.monotonic() - known.read_at > self.timings.pressure_refresh.total_seconds():
            known = await self._refresh(destination)
            if known is None:
                return None
        if known.state.rate is None and known.state.open_until is None:
            return None  # failures counted, circuit closed: nothing to hold or pace
        paced = message.paced and message.waited_for == WaitCause.DESTINATION
        turn = await self._asks.ask(destination, _Turn(message.claim_id, paced))
        if isinstance(turn, Held):
            log.info("occurrence %s deferred: the circuit of %s is open", message.claim_id, destination)
            destination_deferred(destination, "CircuitOpen")
            again = message.waited_for == WaitCause.DESTINATION  # its entry says so already: not written again
            note = None if again else self._circuit_note(destination, turn.until)
            return Deferral(job, message.waiting(turn.until, WaitCause.DESTINATION), note, shown=again)
        assert turn is not None
        start = message.due if paced else turn.at
        if start - self.clock.now() > self.timings.early_hop:
            again = message.waited_for == WaitCause.DESTINATION
            return Deferral(job, message.waiting(start, WaitCause.DESTINATION, paced=True), shown=again)
        await pause_until(self.clock, start - self.timings.connect_lead)
        rate, holder = turn.rate, message.claim_id
        if rate is None:
            return None

        async def on_the_wire() -> None:
            await self._wire.turn(("destination", destination), rate, PACING_SHARE, start, holder)

        return on_the_wire

    async def answered(
        self, job: JobRecord, message: OccurrenceMessage, action: JobErrorAction, result: ActionResult
    ) -> Deferral | None:
        """What the answer tells of its destination; a Deferral when the attempt is to go again at its slot (a
        push-back within its deadline), else None (its answer stands)."""
        destination = destination_key(action, message)
        if destination is None or self.store.destinations is None:
            return None
        now = self.clock.now()
        pushback = result.pushback
        if pushback is None:
            known = self._known.get(destination)
            if not result.unreachable:
                self._count_accepted(destination, now)
                hold = known.state.hold_until if known is not None else None
                if hold is not None and now <= hold:  # learning what it accepts
                    accepted = self._accepted_count(destination, now)
                    learning = _Answer(message.claim_id, failed=False, accepted=accepted, learning=True)
                    await self._answers.ask(destination, learning)
            troubled = known is not None and (known.state.failures > 0 or known.state.open_until is not None)
            if result.unreachable or troubled:
                await self._answers.ask(destination, _Answer(message.claim_id, result.unreachable))
            return None
        within = now - message.fire_instant <= self.timings.deferral_deadline and message.poll is None
        accepted = self._accepted_count(destination, now)
        paced = message.paced and message.waited_for == WaitCause.DESTINATION
        ask = _Answer(message.claim_id, False, pushback.status, pushback.retry_after, accepted, paced)
        slot = await self._answers.ask(destination, ask)
        if not within or not isinstance(slot, _Slot):
            return None
        note = (
            f"Deferred: {destination} answered {pushback.status}"
            + (f" with Retry-After {pushback.retry_after:g} s" if pushback.retry_after is not None else "")
            + f"; the attempt takes its turn under the destination's budget from {format_utc(slot.at)}."
        )
        log.info("occurrence %s deferred: %s pushed back (%d)", message.claim_id, destination, pushback.status)
        destination_deferred(destination, "PushBack")
        return Deferral(job, message.waiting(slot.at, WaitCause.DESTINATION), note)

    async def _refresh(self, destination: str) -> _Known | None:
        """The row read again; None (and forgotten) when it holds nothing any more."""
        row = await self._reads.ask(destination, None)
        return self._remember(destination, row.state)

    def _read(self, destination: str, asks: list[None]) -> list[DestinationRow]:
        rows = self.store.destinations
        assert rows is not None
        return [rows.read(destination)] * len(asks)

    def _remember(self, destination: str, state: DestinationState) -> _Known | None:
        now = self.clock.now()
        state = widened(state, now, self.timings.pressure_quiet, self.timings.pressure_forget)
        if state.clear:
            self._known.pop(destination, None)
            return None
        known = self._known[destination] = _Known(state, self.clock.monotonic())
        return known

    def _count_accepted(self, destination: str, now: datetime) -> None:
        seen = self._accepted.setdefault(destination, deque())
        seen.append(now)
        while seen and now - seen[0] > self.timings.pushback_counted:
            seen.popleft()

    def _accepted_count(self, destination: str, now: datetime) -> int:
        seen = self._accepted.get(destination)
        return sum(1 for at in seen if now - at <= self.timings.pushback_counted) if seen else 0

    def _circuit_note(self, destination: str, until: datetime) -> str:
        known = self._known.get(destination)
        failures = known.state.failures if known is not None else 0
        return (
            f"Deferred: the circuit of {destination} is open after {failures} failures in a row; the attempt goes "
            f"again at {format_utc(until)}, after the destination's next probe."
        )

    def _settle(self, destination: str, asks: list[_Ask]) -> list[_Slot | Held | None]:
        """The asks of one destination in one read and at most one write of its row (blocking; on the pool)."""
        rows = self.store.destinations
        assert rows is not None
        answers: list[_Slot | Held | None] = []

        before: DestinationState | None = None

        def decide(row: DestinationRow) -> DestinationRow | None:
            nonlocal before
            before = row.state
            now = self.clock.now()
            state = widened(row.state, now, self.timings.pressure_quiet, self.timings.pressure_forget)
            answers.clear()
            for ask in asks:
                state, answer = self._one(state, ask, now)
                answers.append(answer)
            return None if state == row.state else DestinationRow(state, row.etag)

        try:
            row = read_modify_write(
                lambda: rows.read(destination),
                decide,
                lambda updated, _: rows.write(destination, updated),
                attempts=ATTEMPTS,
                pause=backoff(self.timings.race_backoff.total_seconds()),
            )
        except ConcurrencyError as exc:
            raise ConcurrencyError(f"the row of destination {destination} kept changing ({ATTEMPTS} attempts)") from exc
        if row is not None:
            self._remember(destination, row.state)
            now = self.clock.now()
            if before is not None and circuit_of(before, now) != circuit_of(row.state, now):
                circuit_changed(destination, circuit_of(row.state, now).value)
        return answers

    def _one(self, state: DestinationState, ask: _Ask, now: datetime) -> tuple[DestinationState, _Slot | Held | None]:
        if isinstance(ask, _Answer):
            if ask.learning:
                return learned(state, now, ask.accepted), None
            state = answered(state, now, ask.failed, ask.holder, self.rules)
            if ask.status is None:
                return state, None
            deadline = self.timings.deferral_deadline
            state = pushed_back(state, now, ask.status, ask.accepted, ask.retry_after, deadline, ask.paced)
            assert state.hold_until is not None
            # Back at the hold's end, it takes its slot of the budget as the budget is by then (`learned`).
            return state, _Slot(state.hold_until)
        turn = gate(state, now, ask.holder, self.rules)
        if isinstance(turn, Held):
            return state, turn
        state = turn.state
        if state.rate is None:
            return state, _Slot(now, turn.probe)
        if ask.paced:
            return state, _Slot(now, turn.probe, state.rate)
        state, slots = reserve(state, now, 1)
        return state, _Slot(slots[0], turn.probe, state.rate)
