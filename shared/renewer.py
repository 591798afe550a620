"""The renewer: one loop per process and kind of held work (a batch's guard, a dispatch task's watchdog) that renews
each held item when its renewal is due, on the lane of its name (shared/threads.py).

Contract: `add` an item (it has `next_renewal`, monotonic seconds; a `renewing` lock; `let_go`); every
`renewer_poll` the loop starts a pass for the items due that no pass under way holds, without waiting for it, and
takes along the items due within `renewal_ahead` (so their storage writes share transactions) that `early` allows
(one whose renewal may not come early waits for its time). A pass holds its items' locks and renews them in one
call, `renew(items)`: per item, the seconds to its next renewal, or what its renewal met (tried again
`renewal_retry` later). `discard` returns once a renewal in progress has ended; none starts after it. `drop` returns
at once (a renewal in progress may end after it); none starts after it either.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from .clock import Clock
from .threads import Threads
from .timings import Timings

log = logging.getLogger(__name__)


class Held(Protocol):
    next_renewal: float
    renewing: threading.Lock  # held while the item is renewed, and while it is let go
    let_go: bool  # no renewal may start any more (its holder is deleting or abandoning its copies)


H = TypeVar("H", bound=Held)


class Renewer(Generic[H]):
    """One loop per process (`Threads.loop`, started on first use, ended by the threads' close) that renews each
    held item when its renewal is due, side by side on the lane of its name (shared/threads.py)."""

    def __init__(
        self,
        renew: Callable[[list[H]], list[float | BaseException]],
        name: str,
        clock: Clock,
        timings: Timings,
        threads: Threads,
        early: Callable[[H], bool] = lambda item: True,
    ) -> None:
        self._renew = renew
        self._early = early
        self._ahead = timings.renewal_ahead.total_seconds()
        self._name = name
        self._clock = clock
        self._poll = timings.renewer_poll.total_seconds()
        self._retry = timings.renewal_retry.total_seconds()
        self._threads = threads
        self._lane = threads.lane(name)
        self._active: set[H] = set()
        self._in_pass: set[H] = set()  # items a pass under way renews: a later look leaves them to it
        self._lock = threading.Lock()
        self._started = False

    def add(self, item: H) -> None:
        with self._lock:
            self._active.add(item)
            if not self._started:
                self._threads.loop(self._name, self._pass, self._poll)
                self._started = True

    def discard(self, item: H) -> None:
        """Stop renewing `item`; returns once a renewal in progress has ended, so the caller then holds the
        item's current receipts, and no renewal can hide a copy anew, or send a fresh one, after it returns
        (that raced with the holder's deletes and left a stray watchdog that ran the work a second time)."""
        with self._lock:
            self._active.discard(item)
        with item.renewing:
            item.let_go = True

    def drop(self, item: H) -> None:
        """Stop renewing `item` without waiting for a renewal in progress, which may still end after this returns:
        for a holder that leaves its copies as they are and must not block (the event loop, cancelled while the
        process goes away). No renewal starts after it."""
        with self._lock:
            self._active.discard(item)
        item.let_go = True  # read by a pass under the item's lock; a pass that read it already ends as it would

    def _pass(self) -> None:
        """One look, every `renewer_poll`: the items due and in no pass under way renewed side by side (the lane's
        table says why). The look does not wait for them: a pass that renews a herd's thousands of claims while the
        storage queue is deep takes seconds, and the items falling due meanwhile would wait for its end, their
        watchdogs turning visible first (bench/fire.py's herd of 5,000: batches taken over by another process)."""
        now = self._clock.monotonic()
        with self._lock:
            free = [item for item in self._active if item not in self._in_pass]
            due = [item for item in free if item.next_renewal <= now]
            if not due:
                return
            due += [item for item in free if now < item.next_renewal <= now + self._ahead and self._early(item)]
            self._in_pass.update(due)
        try:
            self._lane.submit(self._run, due)
        except BaseException:
            self._left(due)
            raise

    def _run(self, items: list[H]) -> None:
        try:
            self._renew_together(items)
        except Exception:
            log.exception("a pass of %s failed; its items are renewed again %.1f s later", self._name, self._retry)
        finally:
            self._left(items)

    def _left(self, items: list[H]) -> None:
        with self._lock:
            self._in_pass.difference_update(items)

    def _renew_together(self, items: list[H]) -> None:
        with contextlib.ExitStack() as held:
            live = []
            for item in items:
                held.enter_context(item.renewing)
                if not item.let_go:
                    item.next_renewal = self._clock.monotonic() + self._retry  # what a failure waits for
                    live.append(item)
            if not live:
                return
            for item, period in zip(live, self._renew(live), strict=True):
                if not isinstance(period, BaseException):
                    item.next_renewal = self._clock.monotonic() + period
