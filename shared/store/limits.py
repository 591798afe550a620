"""The rows of the cross-instance limits (issue 27), in the primary account's `Limits` table: a collection's
concurrency gate (`ConcurrencyGates`) and a target host's pacer (`HostPacers`). Reads and writes only: a row's
state with its ETag (`GateRow`, `PacerRow`; ETag None: no row yet), and a write under that ETag (an insert when
there was none) that raises ConcurrencyError when another instance wrote in between. What the state becomes is
jobstate's (concurrency.py, pacing.py), applied by the executor through `read_modify_write`
(executor/limit_slots.py), so every instance sees one limit.

Why one row per collection for the gate (not a row per slot): the limit is a count, and only one entity can be
read and changed atomically (an entity-group transaction could, but would have to read every slot row first).
So acquiring k slots is one read and one conditional write whatever k, releasing and renewing the same, and the
line of waiters sits beside the leases so slots go out in due order across instances. A row holds up to 1,000
leases and 2,000 waiters (their JSON split over properties of at most CHUNK characters, under the service's
64 KiB a property); one entity takes a few hundred writes a second, and a herd asks in batches (one request
for up to a hundred attempts of a queue message), so contention costs retries, not correctness.

A pacer is one row per (collection, rate-limit rule) holding the rule's next free slot as integer microseconds
since the epoch (exact, whatever the service's DateTime precision): k consecutive slots cost one read and one
conditional write.

Partitions: `gate` and `pacer`, row keys from the collection's table keys (store/keys.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ..jobstate.concurrency import GateState, Lease, Waiter
from ..keys import CollectionKey
from .keys import escape, job_partition
from .tables import Entity, Table, as_int, int64

CHUNK = 30_000  # characters of JSON per property (a property holds 64 KiB: 32,768 UTF-16 characters)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_GATE, _PACER = "gate", "pacer"


@dataclass(frozen=True)
class GateRow:
    state: GateState
    etag: str | None = None  # None: no row yet (the write inserts it)


@dataclass(frozen=True)
class PacerRow:
    next_free: datetime | None  # None: the rule's pacer never handed a slot
    etag: str | None = None


def _micros(instant: datetime) -> int:
    return (instant - _EPOCH) // timedelta(microseconds=1)


def _instant(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


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
    """One gate row per collection: the leases and the line of its maxConcurrentExecutions."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def read(self, collection: CollectionKey) -> GateRow:
        entity = self.table.get(_GATE, job_partition(collection))
        return GateRow(gate_state(entity), None if entity is None else str(entity["etag"]))

    def write(self, collection: CollectionKey, row: GateRow) -> GateRow:
        """`row.state` stored under `row.etag` (inserted when None); ConcurrencyError when the row changed."""
        etag = _write(self.table, _GATE, job_partition(collection), gate_entity(row.state), row.etag)
        return GateRow(row.state, etag)

    def state(self, collection: CollectionKey) -> GateState:
        """The gate as stored (what holds and waits; lapsed entries included until the next write)."""
        return self.read(collection).state


class HostPacers:
    """One pacer row per (collection, rate-limit rule, jobstate.pacer_key): its next free slot."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def read(self, collection: CollectionKey, rule: str) -> PacerRow:
        entity = self.table.get(_PACER, _pacer_row(collection, rule))
        stored = entity.get("NextFree") if entity is not None else None
        next_free = _instant(as_int(stored)) if stored is not None else None
        return PacerRow(next_free, None if entity is None else str(entity["etag"]))

    def write(self, collection: CollectionKey, rule: str, row: PacerRow) -> PacerRow:
        """`row.next_free` stored under `row.etag` (inserted when None); ConcurrencyError when the row changed."""
        assert row.next_free is not None, "a pacer row holds its next free slot"
        entity = {"NextFree": int64(_micros(row.next_free))}
        return PacerRow(row.next_free, _write(self.table, _PACER, _pacer_row(collection, rule), entity, row.etag))

    def next_free(self, collection: CollectionKey, rule: str) -> datetime | None:
        return self.read(collection, rule).next_free


def _write(table: Table, partition: str, row: str, properties: Entity, etag: str | None) -> str:
    entity = {**properties, "PartitionKey": partition, "RowKey": row}
    return table.insert(entity) if etag is None else table.replace(entity, etag)


def _pacer_row(collection: CollectionKey, rule: str) -> str:
    return f"{job_partition(collection)}|{escape(rule)}"
