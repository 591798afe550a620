"""The tasks of one tick of the minute timer: which (bucket, shard) partitions of the due index it sends, and when
each turns visible.

A tick covers every bucket from its watermark (less `dispatch_overlap`, re-read: an API write racing a tick may
land in a bucket just processed) up to its horizon, the whole minute after the current one, at most
MAX_BUCKETS_PER_TICK of them (a long outage is made up over several ticks), and sweeps older buckets that still
hold entries. The minute ahead's tasks turn visible shard by shard over the dispatcher's `spread` (`spread_delay`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from .store import Store, bucket_of, bucket_start
from .store.queues import ShardTask

TICK = timedelta(minutes=1)  # the timer's period and a due-index bucket's width: the schedule's, not a timing
# Buckets read by one tick at most, so recovery from a long outage spreads over several ticks.
MAX_BUCKETS_PER_TICK = 720


@dataclass(frozen=True)
class Window:
    """What one tick sends."""

    tasks: list[ShardTask]
    fresh: set[ShardTask]  # the tasks holding work no tick dispatched yet: sent guarded
    last: datetime  # the last bucket's start
    shards: int
    buckets: int


def dispatch_horizon(now: datetime) -> datetime:
    """Occurrences before this instant are queued already, or must be queued by whoever plans them now:
    the tick running now covers them, and the next tick starts after it."""
    return bucket_start(bucket_of(now)) + 2 * TICK


def spread_delay(bucket: str, shard: int, shards: int, now: datetime, spread: timedelta, margin: timedelta) -> float:
    """Seconds until a dispatch task of `bucket` turns visible: shard by shard over `spread` when the bucket is
    the minute ahead (or later), as far as leaves `margin` (`spread_margin`: time for a task that failed to be
    delivered again, and for a dead host's task to come back by its watchdog) before it begins; at once otherwise."""
    room = min(spread, bucket_start(bucket) - now - margin)
    return max(room.total_seconds(), 0.0) * shard / shards


def tick_window(store: Store, now: datetime) -> Window:
    """The tasks of a tick at `now`: partitions older than the window still holding entries, then every shard of
    every bucket from the watermark's overlap to the horizon."""
    last = dispatch_horizon(now) - TICK  # the last bucket before the horizon
    watermark, shards = store.due.progress()
    watermark = watermark or last - TICK
    # Buckets re-read behind the watermark: an API write racing a tick may land in a bucket just processed.
    first = max(watermark - store.timings.dispatch_overlap, last - MAX_BUCKETS_PER_TICK * TICK)
    buckets = []
    current = first
    while current <= last:
        buckets.append(bucket_of(current))
        current += TICK
    accounts = range(store.due.accounts)  # each storage account's due index is read apart
    tasks = [
        ShardTask(b, s, account=a)
        for a in accounts
        for b, s in sorted(store.due.in_account(a).leftovers_before(bucket_of(first)))
    ]
    tasks += [ShardTask(b, s, account=a) for b in buckets for a in accounts for s in range(shards)]
    # What holds the work: the buckets no tick dispatched yet (past the watermark: the minute ahead, or
    # every minute an outage missed) and the leftover sweeps. The overlap's re-reads are usually empty.
    fresh = {task for task in tasks if task.bucket > bucket_of(watermark) or task.bucket < buckets[0]}
    return Window(tasks, fresh, last, shards, len(buckets))
