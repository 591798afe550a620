"""A collection's concurrency limit (`maxConcurrentExecutions`) as slot arithmetic: leases with expiry and a line
of waiters served in due order. Pure; store/limits.py keeps one state per collection, and the executor applies
these to it under its ETag (executor/limit_slots.py), so the limit holds across every instance.

Rules (docs/decisions.md, "Overlap, limits, long-running completion, spread"):
- a slot is held by an attempt (its claim id) from the start of its action until its answer, or, for an
  asynchronous target, until the work's final status; it is released then. A lease lapses at `until`, so a
  crashed instance's slots come back by themselves; a holder that still works renews it (`renewed`);
- a request for a slot that cannot have one joins the line (`Waiter`, kept until `until`, renewed by each try) and
  is told its place; slots go to the line in due order (its fire instant, then its id): a later occurrence never
  takes a slot an earlier waiting one is due, even on another instance. A waiter that stops asking lapses, and
  the ones behind it move up;
- asking again is idempotent: a holder asking for its own slot keeps it (renewed); a waiter keeps its place and
  its due;
- a waiter need not write to learn whether its turn came: `worth_asking` tells, from the state as read, whether
  asking again could grant it a slot (or must renew its place); a waiting instance reads the row until it does.

How long a slot and a place are held (`lease_for`, `wait_for`) are the settings' timings `slot_lease` and
`waiter_lease` (shared/timings.py), which the executor hands in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from ..records import CollectionRecord
from ..timings import Timings

MAX_WAITERS = 2000  # the line kept in one state; more are told their place but not kept (they ask again)


@dataclass(frozen=True)
class Lease:
    holder: str
    until: datetime


@dataclass(frozen=True)
class Waiter:
    holder: str
    due: datetime  # its fire instant: the line's order
    until: datetime


@dataclass(frozen=True)
class GateState:
    leases: tuple[Lease, ...] = ()
    waiters: tuple[Waiter, ...] = ()

    def held(self, now: datetime) -> tuple[Lease, ...]:
        return tuple(lease for lease in self.leases if lease.until > now)


@dataclass(frozen=True)
class SlotRequest:
    holder: str  # the attempt's claim id
    due: datetime  # its fire instant


@dataclass(frozen=True)
class Acquired:
    granted: tuple[str, ...]  # the asking holders that have a slot now (held before first, then in line order)
    waiting: dict[str, int]  # the others: their place in the whole line (1: first; the first `free` are served)
    state: GateState  # the state to write


def acquire(
    state: GateState,
    limit: int,
    requests: Sequence[SlotRequest],
    now: datetime,
    lease_for: timedelta,
    wait_for: timedelta,
) -> Acquired:
    """Slots for the requests, as many as are free and theirs in the line's order; the rest join the line. A slot
    granted or renewed holds for `lease_for`, a place in the line for `wait_for`."""
    leases = {lease.holder: lease for lease in state.held(now)}
    asking = {r.holder: r for r in sorted(requests, key=lambda r: (r.due, r.holder))}
    for holder in asking.keys() & leases.keys():  # asking again for a slot it holds: renewed
        leases[holder] = Lease(holder, max(leases[holder].until, now + lease_for))
    line: dict[str, Waiter] = {w.holder: w for w in state.waiters if w.until > now and w.holder not in leases}
    for holder, request in asking.items():
        if holder in leases:
            continue
        kept = line.get(holder)
        line[holder] = Waiter(holder, min(kept.due, request.due) if kept else request.due, now + wait_for)
    order = sorted(line.values(), key=lambda w: (w.due, w.holder))
    free = max(0, limit - len(leases))
    granted: list[str] = [h for h in asking if h in leases]
    waiting: dict[str, int] = {}
    for place, waiter in enumerate(order):
        if waiter.holder not in asking:
            continue
        if place < free:
            granted.append(waiter.holder)
            leases[waiter.holder] = Lease(waiter.holder, now + lease_for)
            del line[waiter.holder]
        else:
            waiting[waiter.holder] = place + 1
    kept_line = sorted(line.values(), key=lambda w: (w.due, w.holder))[:MAX_WAITERS]
    return Acquired(tuple(granted), waiting, GateState(tuple(leases.values()), tuple(kept_line)))


def worth_asking(state: GateState, limit: int, holder: str, now: datetime, renew_within: timedelta) -> bool:
    """Whether `holder`, waiting, should ask again now: a slot is free for its place in the line (or it holds
    one), it is not in the line (lapsed, or beyond MAX_WAITERS), or its place lapses within `renew_within`."""
    held = state.held(now)
    if any(lease.holder == holder for lease in held):
        return True
    line = sorted((w for w in state.waiters if w.until > now), key=lambda w: (w.due, w.holder))
    for place, waiter in enumerate(line):
        if waiter.holder == holder:
            return place < limit - len(held) or waiter.until - now <= renew_within
    return True


def released(state: GateState, holders: Iterable[str], now: datetime) -> GateState:
    """The state without the holders' slots (and places in line); lapsed ones are dropped too."""
    gone = set(holders)
    return GateState(
        tuple(lease for lease in state.held(now) if lease.holder not in gone),
        tuple(w for w in state.waiters if w.until > now and w.holder not in gone),
    )


def renewed(
    state: GateState, holders: Iterable[str], now: datetime, lease_for: timedelta
) -> tuple[GateState, frozenset[str]]:
    """The holders' slots held for `lease_for` more, and the holders whose slot had lapsed (they hold none now:
    their work goes on, but the slot may have gone to another)."""
    wanted = set(holders)
    leases = state.held(now)
    present = {lease.holder for lease in leases}
    renewed_leases = tuple(
        replace(lease, until=max(lease.until, now + lease_for)) if lease.holder in wanted else lease for lease in leases
    )
    return GateState(renewed_leases, tuple(w for w in state.waiters if w.until > now)), frozenset(wanted - present)


def limit_of(record: CollectionRecord | None) -> int | None:
    """The collection's maxConcurrentExecutions (None: no limit, or no collection read)."""
    properties = record.definition.properties if record is not None else None
    return properties.max_concurrent_executions if properties is not None else None


def asks_again_after(place: int, timings: Timings) -> timedelta:
    """When an attempt at `place` in a concurrency line asks again: soon at the front (`backoff_first`), later
    behind (`backoff_step` more per place), at most `backoff_max`: well inside `waiter_lease`, delivery's few
    seconds of lateness included (Timings checks it), so it keeps its place."""
    return min(timings.backoff_first + timings.backoff_step * max(place - 1, 0), timings.backoff_max)
