"""A batch's guard renews the claims it holds (shared/leases.py); one that its own delivery marked done meanwhile (a
let-go attempt's admission completes its claim before the guard drops it) is no longer renewed and is not reported
as taken over; one that is gone, or that another runner finished, is reported so. On the memory store and a
ManualClock, through the store's own calls."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from shared.keys import JobKey
from shared.manual_clock import ManualClock
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.store import Claim
from shared.store.claims import Wanted

RUNNER = "delivery-1"


def _claimed(rt: Runtime, names: list[str]) -> tuple[OccurrenceBatch, list[Claim]]:
    due = rt.clock.now().replace(microsecond=0) - timedelta(seconds=1)
    keys = [JobKey("sub", "rg", "c", name) for name in names]
    batch = OccurrenceBatch(tuple(OccurrenceMessage(key, due, due) for key in keys))
    lease = rt.executor.guards.lease_until(batch)
    wanted = [Wanted(item.job, item.claim_id, RUNNER, lease) for item in batch.items]
    claims = rt.store.claims.claim_each(wanted, rt.clock.now())
    assert all(isinstance(claim, Claim) for claim in claims)
    return batch, [claim for claim in claims if isinstance(claim, Claim)]


def test_a_claim_its_holder_finished_is_dropped_quietly_one_gone_or_finished_by_another_is_reported(
    rt: Runtime, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    batch, (finished, released, other, kept) = _claimed(rt, ["finished", "released", "other", "kept"])
    guards = rt.executor.guards
    guard = guards.open(batch)
    for claim in (finished, released, other, kept):
        guard.hold(claim)
    rt.store.claims.complete(finished)  # what a let-go attempt's admission does while the guard holds it
    rt.store.claims.release(released)  # gone
    rt.store.claims.complete(Claim(other.job, other.claim_id, other.etag, "delivery-2"))  # another runner's
    clock.advance(2.0)
    with caplog.at_level(logging.WARNING, logger="shared.leases"):
        guards.renew_together([guard])
    taken = {r.getMessage().split()[1] for r in caplog.records if "taken over while it ran" in r.getMessage()}
    assert taken == {released.claim_id, other.claim_id}
    assert guard.lost == {finished.claim_id, released.claim_id, other.claim_id}
    guards.close(guard)
