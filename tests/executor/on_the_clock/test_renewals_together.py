"""Batches whose renewals fall due within `renewal_ahead` of each other are renewed in one pass of the renewer, and
their claims of one collection in one transaction, whichever batch holds them (shared/leases.py `renew_together`,
shared/renewer.py); a batch's first renewal is never taken along early, so it goes alone. Under a backlog a process
holds many batches, each spanning a dozen collections: a transaction per batch and collection was most of its CPU (a
profile of bench/overload.py). On the memory store and a ManualClock, through the renewer's own loop."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta

from shared.keys import JobKey
from shared.leases import Guard, Guards
from shared.manual_clock import ManualClock
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.store import Claim, ClaimStore
from shared.store.claims import Wanted
from shared.threads import Threads
from tests.support.manual_time import until


class _CountedClaims(ClaimStore):
    def __init__(self, inner: ClaimStore) -> None:
        self.__dict__.update(inner.__dict__)
        self.transactions: list[list[str]] = []  # the runners of each renewal transaction's claims
        self._lock = threading.Lock()

    def renew_group(
        self, claims: Sequence[Claim], lease_until: datetime | Sequence[datetime], finished: set[str] | None = None
    ) -> list[bool]:
        with self._lock:
            self.transactions.append(sorted(claim.runner for claim in claims))
        return super().renew_group(claims, lease_until, finished)


def _holding(rt: Runtime, guards: Guards, names: list[str], runner: str) -> Guard:
    """A late batch of one collection's jobs, opened and its attempts claimed by `runner`, as batch.py does."""
    due = rt.clock.now().replace(microsecond=0) - timedelta(seconds=1)
    batch = OccurrenceBatch(tuple(OccurrenceMessage(JobKey("sub", "rg", "c", name), due, due) for name in names))
    guard = guards.open(batch)
    lease = guards.lease_until(batch)
    for claim in rt.store.claims.claim_each([Wanted(i.job, i.claim_id, runner, lease) for i in batch.items], due):
        assert isinstance(claim, Claim)
        guard.hold(claim)
    return guard


@contextmanager
def _guards_over(rt: Runtime, clock: ManualClock, claims: ClaimStore) -> Iterator[Guards]:
    """Guards of the memory store with `claims` for its claims table, their renewer's loop on `clock`."""
    threads = Threads(clock)
    try:
        yield Guards(replace(rt.store, claims=claims), clock, threads)
    finally:
        threads.close()


def _held_until(clock: ManualClock, condition: Callable[[], bool], steps: int) -> None:
    """The clock moved 0.05 s at a time, each step held until `condition` holds or 0.5 s of real time passed, so a
    renewer's thread that runs late on a busy machine still runs its pass at the clock's time of the step."""
    for _ in range(steps):
        if until(condition, within=0.5):
            return
        clock.advance(0.05)
    assert until(condition, within=0.5)


def test_first_renewals_go_alone_and_later_ones_due_together_share_a_collections_transaction(
    rt: Runtime, clock: ManualClock
) -> None:
    claims = _CountedClaims(rt.store.claims)
    with _guards_over(rt, clock, claims) as guards:
        first = _holding(rt, guards, ["a1", "a2", "a3"], "delivery-1")  # first renewal due `renew_every` from now
        clock.advance(0.3)
        second = _holding(rt, guards, ["b1", "b2"], "delivery-2")  # 0.3 s after: within renewal_ahead of the first
        assert rt.settings.timings.renewal_ahead == timedelta(seconds=1)
        # 2.05 s after the first opened: its first renewal due, the second's within renewal_ahead but a first
        # renewal, which is never taken along early (a batch whose attempts answer soon is never renewed): alone.
        clock.advance(1.75)
        _held_until(clock, lambda: first.renewals == 1, steps=10)
        assert clock.monotonic() < second.next_renewal
        _held_until(clock, lambda: second.renewals == 1, steps=30)
        assert claims.transactions == [["delivery-1"] * 3, ["delivery-2"] * 2]
        # Their second renewals fall due within renewal_ahead of each other: one pass, one transaction.
        _held_until(clock, lambda: first.renewals == 2 and second.renewals == 2, steps=60)
        assert claims.transactions[2:] == [["delivery-1"] * 3 + ["delivery-2"] * 2]
        for guard in (first, second):
            guards.close(guard)


class _SlowClaims(_CountedClaims):
    """Renewal transactions (of `holding`'s claims, or all) that wait for `go`: a storage queue deep with other
    work."""

    def __init__(self, inner: ClaimStore, holding: str | None = None) -> None:
        super().__init__(inner)
        self.go = threading.Event()
        self.waiting = threading.Event()
        self._holding = holding

    def renew_group(
        self, claims: Sequence[Claim], lease_until: datetime | Sequence[datetime], finished: set[str] | None = None
    ) -> list[bool]:
        if self._holding is None or any(claim.runner == self._holding for claim in claims):
            self.waiting.set()
            assert self.go.wait(10), "the test never let the renewal go"
        return super().renew_group(claims, lease_until, finished)


def test_a_renewal_hides_the_watchdog_anew_while_the_claims_transactions_still_wait(
    rt: Runtime, clock: ManualClock
) -> None:
    # In a herd of 5,000 a pass renews thousands of claims while the recorder's transactions fill the storage queue:
    # watchdogs hidden only after the claims' transactions turned visible first, and their batches were taken over.
    claims = _SlowClaims(rt.store.claims)
    with _guards_over(rt, clock, claims) as guards:
        try:
            guard = _holding(rt, guards, ["a1", "a2"], "delivery-1")
            sent = guard.watchdog
            clock.advance(2.05)  # its first renewal due
            assert until(claims.waiting.is_set, within=5), "the renewal's claims transaction never started"
            assert until(lambda: guard.watchdog != sent, within=5), "the watchdog waited for the claims' transaction"
            assert guard.renewals == 0  # not renewed until its claims are
            claims.go.set()
            assert until(lambda: guard.renewals == 1, within=5)
            guards.close(guard)
        finally:
            claims.go.set()


def test_a_pass_still_waiting_on_storage_does_not_hold_back_a_batch_due_after_it_began(
    rt: Runtime, clock: ManualClock
) -> None:
    # A pass over a herd's thousands of claims takes seconds under a deep storage queue; a batch falling due
    # meanwhile waited for it to end, and its watchdog turned visible first.
    claims = _SlowClaims(rt.store.claims, holding="delivery-1")
    with _guards_over(rt, clock, claims) as guards:
        try:
            first = _holding(rt, guards, ["a1"], "delivery-1")
            clock.advance(1.5)
            second = _holding(rt, guards, ["b1"], "delivery-2")  # a first renewal 1.5 s later: never taken along
            clock.advance(0.55)  # the first's renewal due: its pass waits on storage
            assert until(claims.waiting.is_set, within=5), "the first's renewal never started"
            _held_until(clock, lambda: second.renewals == 1, steps=40)
            assert first.renewals == 0, "the first's pass still waits"
            claims.go.set()
            assert until(lambda: first.renewals == 1, within=5)
            for guard in (first, second):
                guards.close(guard)
        finally:
            claims.go.set()
