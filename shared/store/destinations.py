"""The rows of the destinations that push back or fail (issue 40), in the primary account's `Limits` table:
one row per destination (partition `destination`, row key the escaped destination), holding jobstate/pushback.py's
`DestinationState` (its budget and pacer, its hold, its circuit). Reads and writes only; what a row becomes is
jobstate's (pushback.py, circuit.py), applied by executor/destinations.py through `read_modify_write`, so every
instance shares one budget and one circuit.

Instants are stored as integer microseconds since the epoch (exact, as the pacers' are). A row whose state is
`clear` is left in place (a later push-back changes it under its ETag); `all` lists every row, for the API's
destinations list, the console and `scheduler doctor`. An unreadable property reads as absent: the row starts
from what is left, and its next write mends it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ..jobstate.pushback import DestinationState
from .keys import escape
from .tables import Entity, Table, as_int, int64

_PARTITION = "destination"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_INSTANTS = {
    "next_free": "NextFree",
    "hold_until": "HoldUntil",
    "pushed_at": "PushedAt",
    "episode_at": "EpisodeAt",
    "widened_at": "WidenedAt",
    "failing_since": "FailingSince",
    "failed_at": "FailedAt",
    "open_until": "OpenUntil",
}


@dataclass(frozen=True)
class DestinationRow:
    state: DestinationState
    etag: str | None = None  # None: no row yet (the write inserts it)


def _micros(instant: datetime) -> int:
    return (instant - _EPOCH) // timedelta(microseconds=1)


def _instant(value: Any) -> datetime | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None  # absent, or an empty value a hand-edited row may hold: not 1970
    try:
        return _EPOCH + timedelta(microseconds=as_int(value))
    except (TypeError, ValueError, OverflowError):
        return None


def state_of(entity: Entity | None) -> DestinationState:
    if entity is None:
        return DestinationState()
    instants = {name: _instant(entity.get(prop)) for name, prop in _INSTANTS.items()}
    rate = entity.get("Rate")
    status = entity.get("LastStatus")
    failures = entity.get("Failures")
    probe = entity.get("Probe")
    return DestinationState(
        rate=float(rate) if isinstance(rate, int | float) and rate > 0 else None,
        last_status=int(status) if isinstance(status, int) else None,
        failures=int(failures) if isinstance(failures, int) and failures > 0 else 0,
        probe=str(probe) if probe else None,
        **instants,
    )


def entity_of(state: DestinationState) -> Entity:
    entity: Entity = {prop: None for prop in _INSTANTS.values()}
    for name, prop in _INSTANTS.items():
        value = getattr(state, name)
        entity[prop] = int64(_micros(value)) if value is not None else None
    entity["Rate"] = float(state.rate) if state.rate is not None else None
    entity["LastStatus"] = state.last_status
    entity["Failures"] = state.failures
    entity["Probe"] = state.probe
    return {key: value for key, value in entity.items() if value is not None}


class DestinationRows:
    """One row per destination: its push-back and circuit state."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def read(self, destination: str) -> DestinationRow:
        entity = self.table.get(_PARTITION, escape(destination))
        return DestinationRow(state_of(entity), None if entity is None else str(entity["etag"]))

    def write(self, destination: str, row: DestinationRow) -> DestinationRow:
        """`row.state` stored under `row.etag` (inserted when None); ConcurrencyError when the row changed."""
        entity = {**entity_of(row.state), "PartitionKey": _PARTITION, "RowKey": escape(destination)}
        entity["Destination"] = destination  # the row key is escaped (and case-folded): the name as asked
        etag = self.table.insert(entity) if row.etag is None else self.table.replace(entity, row.etag)
        return DestinationRow(row.state, etag)

    def all(self) -> list[tuple[str, DestinationState]]:
        """Every destination with a row, by name."""
        found = self.table.query("PartitionKey eq @p", {"p": _PARTITION})
        rows = [(str(entity.get("Destination") or entity["RowKey"]), state_of(entity)) for entity in found]
        return sorted(rows, key=lambda item: item[0])
