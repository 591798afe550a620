"""What an operator (and GET /api/health) needs to know without logs: is the timer ticking, is work piling up.

After every dispatcher tick `record_tick` measures the due-index backlog and the poison queue's depth and
writes a heartbeat row (`dispatcher`/`heartbeat` in the State table, next to the watermark). `snapshot`
reads it back with a fresh backlog count; it raises `azure.core.exceptions.AzureError` when storage is
unreachable. Nothing here holds a secret: instants and counts only.

Backlog: due-index entries whose minute has already passed. The dispatcher works a minute ahead and
deletes each entry it dispatches, so on a healthy deployment this is 0 right after a tick; anything else
is an occurrence that should have been queued and was not (yet).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .store import Store, bucket_of
from .store.tables import as_datetime, as_int

_PARTITION = "dispatcher"
_ROW = "heartbeat"
# Counting stops here: past it the exact number does not change what an operator does.
BACKLOG_LIMIT = 1000


@dataclass(frozen=True)
class TickObservation:
    backlog: int
    poison_depth: int


@dataclass(frozen=True)
class Snapshot:
    last_tick: datetime | None
    last_tick_duration: float | None
    last_tick_tasks: int | None  # dispatch tasks the tick sent (minute buckets x shards)
    backlog: int
    poison_depth: int


def overdue_entries(store: Store, now: datetime, limit: int = BACKLOG_LIMIT) -> int:
    """Due-index entries in minute buckets before the current one, counted up to `limit`, in every storage account."""
    count = 0
    for account in range(store.due.accounts):
        # Partition keys start with the bucket (yyyyMMddHHmm), so one range query finds every older partition.
        count += store.due.in_account(account).table.count(
            "PartitionKey lt @bucket", {"bucket": bucket_of(now)}, limit - count)
        if count >= limit:
            return limit
    return count


def poison_depth(store: Store) -> int:
    """Approximate number of messages in the occurrence poison queue (ours and the host's)."""
    return int(store.queue.poison_client.get_queue_properties().approximate_message_count or 0)


def record_tick(store: Store, at: datetime, duration: float, tasks: int) -> TickObservation:
    observation = TickObservation(overdue_entries(store, at), poison_depth(store))
    store.due.state.upsert({
        "PartitionKey": _PARTITION, "RowKey": _ROW, "LastTick": at, "DurationSeconds": float(duration),
        "Tasks": int(tasks), "Backlog": observation.backlog, "PoisonDepth": observation.poison_depth,
    })
    return observation


def snapshot(store: Store, now: datetime) -> Snapshot:
    entity = store.due.state.get(_PARTITION, _ROW) or {}
    duration = entity.get("DurationSeconds")
    return Snapshot(
        last_tick=as_datetime(entity.get("LastTick")),
        last_tick_duration=float(duration) if isinstance(duration, int | float) else None,
        last_tick_tasks=as_int(entity.get("Tasks")) if "Tasks" in entity else None,
        backlog=overdue_entries(store, now),
        poison_depth=poison_depth(store),
    )
