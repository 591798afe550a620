"""A destination's circuit (issue 40): after sustained failures no request goes to it but one probe every few
seconds, until a probe succeeds. Pure, over pushback.py's `DestinationState` (one row per destination, shared by
every instance: executor/destinations.py).

- Failures (`answered` with failed=True): a timeout, a refused or broken connection, a 5xx other than 503 (a 503
  is a push-back, pushback.py). Any other answer closes the circuit and clears the count: a 4xx says the
  destination is up.
- It opens after FAILURES in a row, or after two in a row at least `sustained` apart (a single job whose
  retries keep failing opens it too): `open_until` is then the earliest instant of the next probe.
- While it is open (`gate`), an attempt that asks before `open_until` waits: it is deferred to `open_until` plus
  `answer_wait` (by then the probe has usually answered). The first to ask at or after `open_until` is the probe:
  it goes, and `open_until` moves one `probe_every` on, so at most one probe goes per `probe_every` whatever the
  number of instances and jobs. A probe that fails keeps the circuit open; one that succeeds closes it.
- A circuit whose last failure is older than `forget` counts from zero again (a row left by a target long fixed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum

from .pushback import DestinationState

FAILURES = 5  # failures in a row that open the circuit at once


class Circuit(Enum):
    CLOSED = "Closed"
    OPEN = "Open"
    PROBING = "HalfOpen"


@dataclass(frozen=True)
class CircuitRules:
    sustained: timedelta  # two failures in a row this far apart open it
    probe_every: timedelta  # at most one probe per this
    answer_wait: timedelta  # a deferred attempt comes back this long after the next probe's instant
    forget: timedelta  # a failure older than this no longer counts


def circuit_of(state: DestinationState, now: datetime) -> Circuit:
    if state.open_until is None:
        return Circuit.CLOSED
    return Circuit.PROBING if state.probe is not None and now < state.open_until else Circuit.OPEN


def answered(
    state: DestinationState, now: datetime, failed: bool, holder: str, rules: CircuitRules
) -> DestinationState:
    """The state after an answer from the destination (`failed`: one that counts as a failure, see above)."""
    if not failed:
        if state.failures == 0 and state.open_until is None:
            return state
        return replace(state, failures=0, failing_since=None, failed_at=None, open_until=None, probe=None)
    if state.failed_at is not None and now - state.failed_at > rules.forget:
        state = replace(state, failures=0, failing_since=None, open_until=None, probe=None)
    failures = state.failures + 1
    since = state.failing_since or now
    if state.open_until is not None:  # a probe, or an attempt let through past its deadline, failed
        later = max(state.open_until, now + rules.probe_every)
        return replace(state, failures=failures, failed_at=now, open_until=later, probe=None)
    opens = failures >= FAILURES or (failures >= 2 and now - since >= rules.sustained)
    until = now + rules.probe_every if opens else None
    return replace(state, failures=failures, failing_since=since, failed_at=now, open_until=until)


@dataclass(frozen=True)
class Go:
    state: DestinationState  # with the probe marked when this attempt is one
    probe: bool = False


@dataclass(frozen=True)
class Held:
    until: datetime  # when to ask again


def gate(state: DestinationState, now: datetime, holder: str, rules: CircuitRules) -> Go | Held:
    """Whether an attempt may go to the destination now: always while closed; while open, only as the probe."""
    if state.open_until is None:
        return Go(state)
    if state.probe == holder and now < state.open_until:
        return Go(state, probe=True)  # its own probe, asked again (a redelivery)
    if now < state.open_until:
        return Held(state.open_until + rules.answer_wait)
    return Go(replace(state, probe=holder, open_until=now + rules.probe_every), probe=True)
