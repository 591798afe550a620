"""The state of the cross-instance limits (issue 27), in the primary account's `Limits` table: a collection's
concurrency gate (`ConcurrencyGates`) and a target host's pacer (`HostPacers`). The arithmetic is jobstate's
(concurrency.py, pacing.py); this module reads, applies it and writes back under the row's ETag, re-reading
when another instance wrote in between, so every instance sees one limit.

Why one row per collection for the gate (not a row per slot): the limit is a count, and only one entity can be
read and changed atomically (an entity-group transaction could, but would have to read every slot row first).
So acquiring k slots is one read and one conditional write whatever k, releasing and renewing the same, and the
line of waiters sits beside the leases so slots go out in due order across instances. A row holds up to 1,000
leases and 2,000 waiters (their JSON split over properties of at most CHUNK characters, under the service's
64 KiB a property); one entity takes a few hundred writes a second, and a herd asks in batches (one request
for up to a hundred attempts of a queue message), so contention costs retries, not correctness.

A pacer is one row per (collection, rate-limit rule) holding the rule's next free slot as integer microseconds
since the epoch (exact, whatever the service's DateTime precision); `reserve(k)` hands out k consecutive slots
in one read and one conditional write.

Partitions: `gate` and `pacer`, row keys from the collection's table keys (store/keys.py).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from ..jobstate.concurrency import (
    Acquired,
    GateState,
    Lease,
    SlotRequest,
    Waiter,
    acquire,
    released,
    renewed,
)
from ..jobstate.pacing import pace
from ..keys import CollectionKey
from ..timings import Timings
from .keys import escape, job_partition
from .tables import ConcurrencyError, Entity, Table, as_int, int64

T = TypeVar("T")
CHUNK = 30_000  # characters of JSON per property (a property holds 64 KiB: 32,768 UTF-16 characters)
ATTEMPTS = 60  # lost ETag races before giving up: a herd of instances may race for one row
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_GATE, _PACER = "gate", "pacer"


def _micros(instant: datetime) -> int:
    return (instant - _EPOCH) // timedelta(microseconds=1)


def _instant(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


def _pause(attempt: int) -> None:
    """Spread racing writers: a few milliseconds, more after each lost race."""
    time.sleep(random.uniform(0, 0.005 * min(attempt + 1, 10)))


def _update(
    table: Table, partition: str, row: str, change: Callable[[Entity | None], tuple[Entity, T]]
) -> tuple[T, Entity]:
    """Read the row (or nothing), `change` it, write it back under its ETag (insert when it was missing); again
    after a lost race. What `change` returned beside the entity, and the entity written."""
    for attempt in range(ATTEMPTS):
        current = table.get(partition, row)
        entity, answer = change(current)
        entity = {**entity, "PartitionKey": partition, "RowKey": row}
        try:
            if current is None:
                table.insert(entity)
            else:
                table.replace(entity, str(current["etag"]))
            return answer, entity
        except ConcurrencyError:
            _pause(attempt)
    raise ConcurrencyError(f"the limit row {partition}/{row} kept changing ({ATTEMPTS} attempts)")


def _chunks(name: str, items: list[Any]) -> Entity:
    text = json.dumps(items, separators=(",", ":"))
    parts = [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)] or ["[]"]
    return {f"{name}{i}": part for i, part in enumerate(parts)} | {f"{name}Parts": len(parts)}


def _unchunk(entity: Entity, name: str) -> list[Any]:
    parts = int(entity.get(f"{name}Parts") or 0)
    text = "".join(str(entity.get(f"{name}{i}", "")) for i in range(parts))
    try:
        items = json.loads(text) if text else []
    except ValueError:
        return []  # an unreadable row starts empty: its leases lapse anyway
    return items if isinstance(items, list) else []


def gate_state(entity: Entity | None) -> GateState:
    if entity is None:
        return GateState()
    try:
        leases = tuple(Lease(str(h), _instant(int(u))) for h, u in _unchunk(entity, "Leases"))
        waiters = tuple(Waiter(str(h), _instant(int(d)), _instant(int(u))) for h, d, u in _unchunk(entity, "Waiters"))
    except (TypeError, ValueError):
        return GateState()
    return GateState(leases, waiters)


def gate_entity(state: GateState) -> Entity:
    return _chunks("Leases", [[lease.holder, _micros(lease.until)] for lease in state.leases]) | _chunks(
        "Waiters", [[w.holder, _micros(w.due), _micros(w.until)] for w in state.waiters]
    )


class ConcurrencyGates:
    """One gate per collection: its maxConcurrentExecutions held across every instance."""

    def __init__(self, table: Table, timings: Timings) -> None:
        self.table = table
        self.slot_lease = timings.slot_lease
        self.waiter_lease = timings.waiter_lease

    def acquire(
        self, collection: CollectionKey, limit: int, requests: Sequence[SlotRequest], now: datetime
    ) -> Acquired:
        """Slots for the requests (attempts about to start): the granted ones hold a slot for `slot_lease`; the
        others are told their place in the line, which they keep for `waiter_lease` (ask again before it ends)."""

        def change(entity: Entity | None) -> tuple[Entity, Acquired]:
            done = acquire(gate_state(entity), limit, requests, now, self.slot_lease, self.waiter_lease)
            return gate_entity(done.state), done

        return _update(self.table, _GATE, job_partition(collection), change)[0]

    def settle(
        self,
        collection: CollectionKey,
        limit: int,
        done: Iterable[str],
        requests: Sequence[SlotRequest],
        now: datetime,
    ) -> Acquired:
        """`release` of `done`, then `acquire` for `requests`, in one read and one write: what an executor that
        gathers its attempts' answers and askers sends together."""
        gone = list(done)

        def change(entity: Entity | None) -> tuple[Entity, Acquired]:
            state = released(gate_state(entity), gone, now)
            answer = acquire(state, limit, requests, now, self.slot_lease, self.waiter_lease)
            return gate_entity(answer.state), answer

        return _update(self.table, _GATE, job_partition(collection), change)[0]

    def release(self, collection: CollectionKey, holders: Iterable[str], now: datetime) -> None:
        """The holders' slots (and places in line) given back."""
        gone = list(holders)

        def change(entity: Entity | None) -> tuple[Entity, None]:
            return gate_entity(released(gate_state(entity), gone, now)), None

        _update(self.table, _GATE, job_partition(collection), change)

    def renew(
        self, collection: CollectionKey, holders: Iterable[str], now: datetime, lease_for: timedelta | None = None
    ) -> frozenset[str]:
        """The holders' slots held for `lease_for` (else `slot_lease`) more; the holders whose slot had lapsed
        meanwhile."""
        wanted = list(holders)

        def change(entity: Entity | None) -> tuple[Entity, frozenset[str]]:
            state, lost = renewed(gate_state(entity), wanted, now, self.slot_lease if lease_for is None else lease_for)
            return gate_entity(state), lost

        return _update(self.table, _GATE, job_partition(collection), change)[0]

    def state(self, collection: CollectionKey) -> GateState:
        """The gate as stored (what holds and waits; lapsed entries included until the next write)."""
        return gate_state(self.table.get(_GATE, job_partition(collection)))


class HostPacers:
    """One pacer per (collection, rate-limit rule): its next free slot."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def reserve(self, collection: CollectionKey, rule: str, k: int, rate: float, now: datetime) -> list[datetime]:
        """k consecutive slots of the rule's pacer (jobstate.pacer_key), 1/rate apart, from its next free slot
        or now: when each of k requests asked for now may start."""

        def change(entity: Entity | None) -> tuple[Entity, list[datetime]]:
            stored = entity.get("NextFree") if entity is not None else None
            paced = pace(_instant(as_int(stored)) if stored is not None else None, rate, now, k)
            return {"NextFree": int64(_micros(paced.next_free))}, list(paced.slots)

        return _update(self.table, _PACER, _pacer_row(collection, rule), change)[0]

    def next_free(self, collection: CollectionKey, rule: str) -> datetime | None:
        entity = self.table.get(_PACER, _pacer_row(collection, rule))
        stored = entity.get("NextFree") if entity is not None else None
        return _instant(as_int(stored)) if stored is not None else None


def _pacer_row(collection: CollectionKey, rule: str) -> str:
    return f"{job_partition(collection)}|{escape(rule)}"
