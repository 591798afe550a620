"""Calls of many coroutines gathered into one blocking call: a herd asks the storage row of a limit once, not once
per attempt.

A coroutine `ask`s with a key and a request. The first one for a key waits `window` seconds (on the clock given) for
others, then hands every request gathered so far to `flush` in one call on the executor's pool; requests arriving
while that call runs go into the next one. Each asker gets its own answer (`flush` returns one per request, in
order), or the call's exception. Keys are kept per event loop (tools and tests run several), and a key with nothing
pending is forgotten.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..clock import Clock

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")
A = TypeVar("A")


@dataclass
class _Lane(Generic[R, A]):
    pending: list[tuple[R, asyncio.Future[A]]] = field(default_factory=list)
    busy: bool = False


class Gathered(Generic[K, R, A]):
    def __init__(
        self, io: Callable[..., Awaitable[Any]], flush: Callable[[K, list[R]], list[A]], window: float, clock: Clock
    ) -> None:
        self.io = io  # runs a blocking call off the event loop
        self.flush = flush
        self.window = window
        self.clock = clock
        self._lanes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[K, _Lane[R, A]]] = (
            weakref.WeakKeyDictionary()
        )

    async def ask(self, key: K, request: R) -> A:
        loop = asyncio.get_running_loop()
        lanes = self._lanes.setdefault(loop, {})
        lane = lanes.get(key)
        if lane is None:
            lane = lanes[key] = _Lane()
        future: asyncio.Future[A] = loop.create_future()
        lane.pending.append((request, future))
        if not lane.busy:
            lane.busy = True
            loop.create_task(self._drain(lanes, key, lane))
        # Each asker awaits a future of its own: cancelling one cancels only that future, which `_drain` then leaves
        # unanswered; the call the others share goes on.
        return await future

    async def _drain(self, lanes: dict[K, _Lane[R, A]], key: K, lane: _Lane[R, A]) -> None:
        try:
            while lane.pending:
                await self.clock.pause(self.window)
                taken, lane.pending = lane.pending, []
                try:
                    answers: list[A] = await self.io(self.flush, key, [request for request, _ in taken])
                except BaseException as error:  # every asker of this call learns of it
                    for _, future in taken:
                        if not future.done():
                            future.set_exception(error)
                    if not isinstance(error, Exception):
                        raise
                    continue
                for (_, future), answer in zip(taken, answers, strict=True):
                    if not future.done():
                        future.set_result(answer)
        finally:
            lane.busy = False
            if lanes.get(key) is lane and not lane.pending:
                del lanes[key]
