"""Batches whose renewals fall due within `renewal_ahead` of each other are renewed in one pass of the renewer, and
their claims of one collection in one transaction, whichever batch holds them (shared/leases.py `renew_together`,
shared/renewer.py); a batch due later waits for a pass of its own. Under a backlog a process holds many batches,
each spanning a dozen collections: a transaction per batch and collection was most of its CPU (a profile of
bench/overload.py). On the memory store and a ManualClock, through the renewer's own loop."""

from __future__ import annotations

import threading
from collections.abc import Sequence
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
from tests.support.manual_time import step_until, until


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


def test_batches_due_together_renew_a_collections_claims_in_one_transaction_a_later_one_on_its_own(
    rt: Runtime, clock: ManualClock
) -> None:
    claims = _CountedClaims(rt.store.claims)
    threads = Threads(clock)
    guards = Guards(replace(rt.store, claims=claims), clock, threads)
    try:
        first = _holding(rt, guards, ["a1", "a2", "a3"], "delivery-1")  # due for renewal `renew_every` from now
        clock.advance(0.6)
        second = _holding(rt, guards, ["b1", "b2"], "delivery-2")  # 0.6 s after the first: within renewal_ahead
        clock.advance(1.2)
        later = _holding(rt, guards, ["c1"], "delivery-3")  # 1.8 s after: not within it
        assert rt.settings.timings.renewal_ahead == timedelta(seconds=1)
        # From 2.05 s to 2.75 s after the first opened: its renewal due, the second's within renewal_ahead, the later's
        # (due at 3.8 s, taken along from 2.8 s) not, however late the renewer's thread runs its pass in real time.
        clock.advance(0.25)
        for _ in range(14):
            if until(lambda: first.renewals == 1 and second.renewals == 1, within=0.5):
                break
            clock.advance(0.05)
        assert claims.transactions == [["delivery-1"] * 3 + ["delivery-2"] * 2]
        assert later.renewals == 0
        step_until(clock, lambda: later.renewals == 1)
        assert any("delivery-3" in runners for runners in claims.transactions[1:])
        for guard in (first, second, later):
            guards.close(guard)
    finally:
        threads.close()
