"""Is a job's collection Enabled at the second its occurrence fires? One storage read answers a whole herd.

Enable, disable and delete of a collection answer once the collection's own row says so; its jobs follow
later (shared/lifecycle/cascade.py). So the executor, not the jobs' states, is what stops a Disabled,
Suspended or Deleted collection from running anything: every attempt asks here right before its action.

The answer is a read of the collection's row that started at most `collection_fresh` (1 s; the settings' timing,
shared/timings.py) before the question. Questions asked while such a read is under way, or within
`collection_fresh` of its start, share it: a herd of a thousand attempts of one collection costs one read, a steady
load about one read per collection and second, whatever its rate. So an attempt whose second comes more than
`collection_fresh` after a disable's answer does not run; one of a herd, which asks when it gets ready ahead of its
second (batch.py `_ready_at`: by `ready_each` per attempt of the process due at that second, at most `ready_most`),
more than `collection_fresh` and that lead. A read that failed is not kept (the attempts that shared
it fail before their actions, and the host delivers them again). The same read hands out the collection's
definition (`record`): its maxConcurrentExecutions and targetRateLimits (shared/executor/limits.py) cost no request
of their own.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..clock import Clock
from ..keys import CollectionKey
from ..model import JobCollectionState
from ..records import CollectionRecord
from ..store import Store


@dataclass
class _Read:
    started: float
    task: asyncio.Task[CollectionRecord | None]


class CollectionGate:
    def __init__(self, store: Store, clock: Clock, io: Callable[..., Awaitable[Any]]) -> None:
        self.store = store
        self.clock = clock  # its monotonic time says how old a read is
        self.io = io  # runs a blocking storage call off the event loop
        self.fresh = store.timings.collection_fresh.total_seconds()  # seconds a read keeps answering
        self._reads: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[CollectionKey, _Read]] = (
            weakref.WeakKeyDictionary()
        )

    async def enabled(self, key: CollectionKey) -> bool:
        return await self.state(key) == JobCollectionState.ENABLED

    async def state(self, key: CollectionKey) -> JobCollectionState | None:
        """The collection's state as read at most `fresh` seconds ago (None: there is no such collection)."""
        record = await self.record(key)
        return record.state if record is not None else None

    async def record(self, key: CollectionKey) -> CollectionRecord | None:
        """The collection as read at most `fresh` seconds ago (None: there is no such collection)."""
        loop = asyncio.get_running_loop()
        reads = self._reads.setdefault(loop, {})
        now = self.clock.monotonic()
        read = reads.get(key)
        if read is None or now - read.started > self.fresh:
            if len(reads) > 1000:  # forget reads too old to answer, so the table follows the collections in use
                for stale in [k for k, r in reads.items() if now - r.started > self.fresh and r.task.done()]:
                    del reads[stale]
            read = reads[key] = _Read(now, loop.create_task(self._read(key)))
            read.task.add_done_callback(lambda task: self._forget_failure(reads, key, task))
        # Shielded: an attempt cancelled while it waits must not cancel the read the others share.
        return await asyncio.shield(read.task)

    async def latest(self, key: CollectionKey) -> CollectionRecord | None:
        """The collection as last read when a read ended (however long ago), else as `record` reads it: what an
        attempt that just asked for the state uses, without a second read when `fresh` ran out meanwhile."""
        loop = asyncio.get_running_loop()
        read = self._reads.get(loop, {}).get(key)
        if read is not None and read.task.done() and not read.task.cancelled() and read.task.exception() is None:
            return read.task.result()
        return await self.record(key)

    async def _read(self, key: CollectionKey) -> CollectionRecord | None:
        record: CollectionRecord | None = await self.io(self.store.collections.get, key)
        return record

    @staticmethod
    def _forget_failure(
        reads: dict[CollectionKey, _Read], key: CollectionKey, task: asyncio.Task[CollectionRecord | None]
    ) -> None:
        if task.cancelled() or task.exception() is not None:
            current = reads.get(key)
            if current is not None and current.task is task:
                del reads[key]
