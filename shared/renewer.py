"""The renewer: one loop per process and kind of held work (a batch's guard, a dispatch task's watchdog) that renews
each held item when its renewal is due, on the lane of its name (shared/threads.py).

Contract: `add` an item (it has `next_renewal`, monotonic seconds; a `renewing` lock; `let_go`); every
`renewer_poll` the loop renews the items due, each under its lock: `renew(item)` returns the seconds to its next
renewal (None: `renew_every`), a failure is tried again `renewal_retry` later. With `together`, one call renews
the items of a pass, and a pass takes along the items due within `renewal_ahead` (so their storage writes share
transactions) that `early` allows (one whose renewal may not come early waits for its time). `discard` returns
once a renewal in progress has ended; none starts after it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from .clock import Clock
from .threads import Threads
from .timings import Timings


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
        renew: Callable[[H], float | None],
        name: str,
        clock: Clock,
        timings: Timings,
        threads: Threads,
        together: Callable[[list[H]], list[float | BaseException]] | None = None,
        early: Callable[[H], bool] = lambda item: True,
    ) -> None:
        """`together`, when given, renews the items of a pass in one call (per item: the seconds to its next renewal,
        or what its renewal met), and a pass then takes along every item due within `renewal_ahead` that `early`
        allows."""
        self._renew = renew
        self._together = together
        self._early = early
        self._ahead = timings.renewal_ahead.total_seconds() if together is not None else 0.0
        self._name = name
        self._clock = clock
        self._poll = timings.renewer_poll.total_seconds()
        self._retry = timings.renewal_retry.total_seconds()
        self._every = timings.renew_every.total_seconds()
        self._threads = threads
        self._lane = threads.lane(name)
        self._active: set[H] = set()
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

    def _pass(self) -> None:
        """One look, every `renewer_poll`: the items due renewed side by side (the lane's table says why)."""
        now = self._clock.monotonic()
        with self._lock:
            due = [item for item in self._active if item.next_renewal <= now]
            if not due:
                return
            due += [item for item in self._active if now < item.next_renewal <= now + self._ahead and self._early(item)]
        if self._together is not None:
            self._lane.submit(self._renew_together, due).result()
        else:
            list(self._lane.map(self._renew_one, due))

    def _renew_together(self, items: list[H]) -> None:
        with contextlib.ExitStack() as held:
            live = []
            for item in items:
                held.enter_context(item.renewing)
                if not item.let_go:
                    item.next_renewal = self._clock.monotonic() + self._retry  # what a failure waits for
                    live.append(item)
            if not live or self._together is None:
                return
            for item, period in zip(live, self._together(live), strict=True):
                if not isinstance(period, BaseException):
                    item.next_renewal = self._clock.monotonic() + period

    def _renew_one(self, item: H) -> None:
        with item.renewing:
            if item.let_go:
                return
            item.next_renewal = self._clock.monotonic() + self._retry  # what a failure waits for
            with contextlib.suppress(Exception):  # logged by the renewal; retried on a later pass
                period = self._renew(item)  # the seconds to its next renewal, when not `renew_every`
                item.next_renewal = self._clock.monotonic() + (self._every if period is None else period)
