"""A rate limit's turn on the wire (issue 27): the last step of pacing a request, taken once its connection is made,
right before the request is written (the action awaits `ExecutionContext.before_send` there: outbound.py).

The slots (limits.py, store/limits.py) say when each request may start, across instances; between a slot and the
wire lie the connection's set-up and a busy event loop, and a request that left its slot late would go out right
beside the next one on time. So the turn is taken on the wire: a request goes when its slot has come and the
rule's window (jobstate.pacing `send_at`: at most n in any n / (rate x share) seconds, half a slot apart at least)
lets it, judged by when this process's previous requests under the rule went; requests waiting for their turn go
in slot order (then claim id), whichever connected first. The time is the clock's monotonic one, read by the request
itself when it resumes, so a stalled event loop never sends the turns it overslept at once; and a request's
send is counted from once its task has yielded after its turn (`_written`), so no thread holding the GIL
between a turn and its write can bring two requests closer than the rule allows.

Per event loop and per rule (the key limits.py gives: collection and rule); a rule's entry is dropped once nothing
waits and its window has passed.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import datetime

from ..clock import Clock
from ..jobstate import send_at, window_of


@dataclass(order=True)
class _Waiter:
    order: tuple[datetime, str]
    seq: int
    ready: asyncio.Event = field(compare=False, default_factory=asyncio.Event)


@dataclass
class _Lane:
    sent: list[float] = field(default_factory=list)  # this process's latest sends under the rule (monotonic)
    line: list[_Waiter] = field(default_factory=list)  # a heap: the next to go first
    writing: bool = False  # the latest turn's request is not yet known to be written


class WireTurns:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._seq = itertools.count()
        self._lanes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, _Lane]] = (
            weakref.WeakKeyDictionary()
        )

    async def turn(self, key: Hashable, rate: float, share: float, slot: datetime, holder: str) -> None:
        """Return when the request holding `slot` may be written: its slot has come and the rule's window allows."""
        not_before = self.clock.monotonic() + (slot - self.clock.now()).total_seconds()
        lanes = self._lanes.setdefault(asyncio.get_running_loop(), {})
        lane = lanes.get(key)
        if lane is None:
            self._forget_idle(lanes, self.clock.monotonic())
            lane = lanes[key] = _Lane()
        me = _Waiter((slot, holder), next(self._seq))
        heapq.heappush(lane.line, me)
        try:
            while True:
                if lane.line[0] is not me or lane.writing:
                    me.ready.clear()
                    await me.ready.wait()
                    continue
                now = self.clock.monotonic()
                at = send_at(lane.sent, rate, share, now, not_before)
                if at <= now:
                    break
                await self.clock.pause(at - now)  # a waiter due earlier may come meanwhile: asked again
            heapq.heappop(lane.line)
            lane.sent.append(now)
            # Written by the caller before it next yields to the loop: the next turn is judged from then.
            lane.writing = True
            asyncio.get_running_loop().call_soon(self._written, lane)
            del lane.sent[: -window_of(rate, share)[0]]
        finally:
            if me in lane.line:  # cancelled while waiting (the attempt's deadline)
                lane.line.remove(me)
                heapq.heapify(lane.line)
            if lane.line:
                lane.line[0].ready.set()

    def _written(self, lane: _Lane) -> None:
        """The latest turn's request is on the wire (its task yielded since): its send counts from now, an upper
        bound of when it was written, so a write held up after its turn (the GIL taken by another thread) never
        leaves less than the rule's spacing before the next one."""
        lane.sent[-1] = self.clock.monotonic()
        lane.writing = False
        if lane.line:
            lane.line[0].ready.set()

    @staticmethod
    def _forget_idle(lanes: dict[Hashable, _Lane], now: float) -> None:
        """Drop the rules nothing waits for and whose latest send is two minutes past (no window is longer
        than about a hundred seconds: a rate is at least 0.01 a second)."""
        for key in [k for k, lane in lanes.items() if not lane.line and (not lane.sent or lane.sent[-1] < now - 120)]:
            del lanes[key]
