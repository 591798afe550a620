"""Attempts that wait longer than a coroutine should for a limit (limits.py answers `Deferral`): queued again.

`requeue`: the deferred attempt's claim given back first (so its message, when it comes, claims it again), then its
Waiting ledger entry (a first attempt whose wait exceeds WAIT_SHOWN_AFTER: written before the message, since the
attempt's own entry, written when it runs, must come after), both on the limits-deferral lane (shared/threads.py):
a herd defers hundreds of attempts at its second, due seconds later, and their small writes on the executor's pool
would starve the event loop (one GIL) that sends the herd's paced requests meanwhile. Then its message, queued with
the others deferred within `deferral_gather`, a batch per second of due (each fires at its own due), in due order;
not on the deferral lane, so a message queued again never waits behind the herd's releases and entries.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from typing import Any

from ..clock import Clock
from ..jobstate.ledger import WAIT_SHOWN_AFTER, waiting
from ..model import JobHistoryActionName
from ..occurrence import BATCH_MAX, OccurrenceBatch, OccurrenceMessage
from ..records import JobRecord
from ..store import Store
from .gathered import Gathered

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Deferral:
    """An attempt that waits longer: its message queued again (`requeue`) once its claim is given back."""

    job: JobRecord
    message: OccurrenceMessage  # the attempt as queued again: due later, its first fire instant kept
    note: str | None = None  # its Waiting entry's message, written however short the wait (a destination's)
    shown: bool = False  # its Waiting entry was written when it was deferred before, for the same cause


class Deferrals:
    def __init__(self, store: Store, clock: Clock, io: Callable[..., Awaitable[Any]], lane: Executor) -> None:
        self.store = store
        self.clock = clock
        self._lane = lane
        gather = store.timings.deferral_gather.total_seconds()
        self._queue: Gathered[None, OccurrenceMessage, None] = Gathered(io, self._send, gather, clock)

    async def requeue(self, deferral: Deferral, give_back: Callable[[], object]) -> None:
        """Give the deferred attempt's claim back (`give_back`), write its Waiting entry when due, then queue it
        again."""
        message = deferral.message

        def before() -> None:
            give_back()  # first: the message, when it comes, claims the attempt again
            long_wait = message.due - message.fire_instant > WAIT_SHOWN_AFTER
            if deferral.note is not None or (long_wait and not deferral.shown):
                self._show_waiting(deferral.job, message, deferral.note)

        await asyncio.get_running_loop().run_in_executor(self._lane, before)
        await self._queue.ask(None, message)

    async def show_waiting(self, job: JobRecord, message: OccurrenceMessage) -> None:
        """The Waiting entry of a first attempt that waits in its coroutine (limits.py), on the deferral lane."""
        await asyncio.get_running_loop().run_in_executor(self._lane, self._show_waiting, job, message)

    def _show_waiting(self, job: JobRecord, message: OccurrenceMessage, note: str | None = None) -> None:
        """The Waiting ledger entry of an occurrence whose first attempt waits (best effort); `note`: its message
        when the cause says more than its reason (a destination's name and until when)."""
        if message.poll is not None or message.waited_for is None:
            return
        # A retry deferred by its destination shows too: its entry said Failed, and it now waits instead.
        retried = note is not None and message.action == JobHistoryActionName.MAIN_ACTION
        if not message.first_attempt and not retried:
            return
        entry = waiting(job, message.occurrence, message.trigger, message.waited_for, message.fire_instant)
        if note is not None:
            entry = replace(entry, message=note, retry_count=message.attempt, attempts=message.attempt)
        try:
            self.store.history.add_all([], [entry])
        except Exception:
            log.exception("the Waiting entry of %s was not written", message.claim_id)

    def _send(self, _: None, messages: list[OccurrenceMessage]) -> list[None]:
        now = self.clock.now()
        for batch in _by_second(messages):
            self.store.queue.send(batch, now)
        return [None] * len(messages)


def _by_second(messages: list[OccurrenceMessage]) -> list[OccurrenceBatch]:
    groups: dict[int, list[OccurrenceMessage]] = {}
    for message in sorted(messages, key=lambda m: m.due):
        groups.setdefault(math.floor(message.due.timestamp()), []).append(message)
    return [
        OccurrenceBatch(tuple(group[i : i + BATCH_MAX]))
        for group in groups.values()
        for i in range(0, len(group), BATCH_MAX)
    ]
