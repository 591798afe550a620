"""The renewer lets an item go two ways (shared/renewer.py): `discard` returns once a renewal in progress has ended,
`drop` at once (the executor's batch cancelled on the event loop must not wait out a renewal's storage calls); after
either, no renewal of the item starts. Through the renewer's own loop, on the system clock."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from shared.clock import SystemClock
from shared.renewer import Renewer
from shared.threads import Threads
from shared.timings import Timings

TIMINGS = Timings()
POLL = TIMINGS.renewer_poll.total_seconds()


@dataclass(eq=False)
class Item:
    next_renewal: float = 0.0  # due at once
    renewing: threading.Lock = field(default_factory=threading.Lock)
    let_go: bool = False


class HeldRenewal:
    """A renew call that holds its pass (and so the items' locks) until released; counts the calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, items: list[Item]) -> list[float | BaseException]:
        self.calls += 1
        self.started.set()
        self.release.wait(30)
        return [0.0 for _ in items]  # due again at once: only a let-go item is not renewed at the next poll


def in_a_thread(call: object, item: Item) -> threading.Thread:
    thread = threading.Thread(target=call, args=(item,), daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


@contextmanager
def renewal_in_progress() -> Iterator[tuple[Renewer[Item], HeldRenewal, Item]]:
    """A renewer whose first renewal of a due item is under way (and holds the item's lock) until released."""
    threads = Threads(SystemClock())
    renewal = HeldRenewal()
    renewer: Renewer[Item] = Renewer(renewal, "attempt-renewer", SystemClock(), TIMINGS, threads)
    item = Item()
    try:
        renewer.add(item)
        assert renewal.started.wait(POLL * 10), "the renewer never renewed a due item"
        yield renewer, renewal, item
    finally:
        renewal.release.set()
        threads.close()


def test_drop_returns_while_a_renewal_is_in_progress_and_none_starts_after() -> None:
    with renewal_in_progress() as (renewer, renewal, item):
        dropping = in_a_thread(renewer.drop, item)
        dropping.join(POLL * 4)
        assert not dropping.is_alive(), "drop waited for the renewal in progress"
        assert item.let_go
        renewal.release.set()
        time.sleep(POLL * 4)  # four polls: a renewal still started would have begun by now
        assert renewal.calls == 1


def test_discard_waits_for_the_renewal_in_progress() -> None:
    with renewal_in_progress() as (renewer, renewal, item):
        discarding = in_a_thread(renewer.discard, item)
        discarding.join(POLL * 4)
        assert discarding.is_alive(), "discard returned while the renewal was in progress"
        renewal.release.set()
        discarding.join(POLL * 10)
        assert not discarding.is_alive() and item.let_go
        time.sleep(POLL * 4)
        assert renewal.calls == 1
