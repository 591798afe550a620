"""A job's attempts that one batch holds go out in their due order.

Occurrences of one job share a batch when an `All` catch-up queues them 1 s apart (jobstate/plan.py
`CATCH_UP_SPACING`), or a backfill does. Each fires at its own second; but received late (the host came back from
an outage, a poll came late), all are past due at once and would fire side by side, in whatever order their
admission and their connections happened to take: the README promises them in order. So each waits, after its
second, until the job's attempt before it in the batch is on the wire (its request is being written: the action's
`before_send`, after any rate-limit turn) or ended without sending (skipped, waiting, failed before its action,
or an action that is not Http: those end before the next starts). Attempts of other jobs wait for nobody.
A turn also holds the request to its second when the attempt got ready ahead of it (`not_before`, set by
batch.py `_ready_at`).

Contract: `turns(messages)` gives one `Turn` per message, in the order given; `Turn.wait()` returns once the
job's earlier attempt went out; `Turn.went_out()` may be called any number of times (the action's request and its
polls each call it; the attempt's end calls it again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..clock import Clock, pause_until
from ..keys import JobKey
from ..occurrence import OccurrenceMessage


@dataclass
class Turn:
    after: asyncio.Event | None = None  # set once the job's attempt before this one went out or ended
    out: asyncio.Event = field(default_factory=asyncio.Event)
    # Out, or only waiting to take a claim over (`takeover_wait`, a coroutine's sleep): its batch's place in the late
    # line may go (late_line.py), which a batch of takeovers after a restart would otherwise hold seconds doing nothing.
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    not_before: datetime | None = None  # its second, when it got ready ahead of it: its request waits for it

    async def wait(self) -> None:
        if self.after is not None:
            await self.after.wait()

    def went_out(self) -> None:
        self.out.set()
        self.idle.set()

    def waits(self) -> None:
        self.idle.set()

    def before_send(self, paced: Callable[[], Awaitable[None]] | None, clock: Clock) -> Callable[[], Awaitable[None]]:
        """The action's `before_send`: its second (`not_before`), then its rate limit's turn on the wire (`paced`),
        then this one is out."""

        async def on_the_wire() -> None:
            if self.not_before is not None:
                await pause_until(clock, self.not_before)
            if paced is not None:
                await paced()
            self.went_out()

        return on_the_wire


def turns(messages: Sequence[OccurrenceMessage | None]) -> list[Turn]:
    """One turn per message (None: an attempt that will not fire, which waits for nobody and nobody for it)."""
    found = [Turn() for _ in messages]
    by_job: dict[JobKey, list[tuple[OccurrenceMessage, Turn]]] = {}
    for message, turn in zip(messages, found, strict=True):
        if message is not None:
            by_job.setdefault(message.job, []).append((message, turn))
    for held in by_job.values():
        ordered = [turn for _, turn in sorted(held, key=lambda pair: (pair[0].due, pair[0].occurrence))]
        for before, after in zip(ordered, ordered[1:], strict=False):
            after.after = before.out
    return found
