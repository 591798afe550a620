"""An attempt whose claim's lease ran out before it fired (its process too starved to renew in time) asks storage
first (executor/attempts.py `fire`, leases.py `Guard.keep`): when another worker took it over meanwhile it is not
fired (that worker runs it), and when nobody did, the claim is renewed and it fires. Before, it fired either way: an
overload run with 128 messages in hand per process duplicated 264 occurrences, 159 of them so.

On the memory store and a ManualClock, against a real local HTTP target: the holder's delivery is set up as the
batch would (its guard opened, its claim taken), the clock moved past the lease, then the attempt fired."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from shared.manual_clock import ManualClock
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.store.claims import Claim, Expired
from tests.executor.peers.servers import Server, ok, serve
from tests.executor.support import http, job_status, make_collection, put_job
from tests.support.manual_time import runtime_in_memory


@pytest.fixture
def rt(clock: ManualClock) -> Iterator[Runtime]:
    with runtime_in_memory(clock) as runtime:
        yield runtime


@pytest.fixture
def target() -> Iterator[Server]:
    server = serve(ok)
    yield server
    server.close()


def _held(rt: Runtime, clock: ManualClock, target: Server) -> tuple[OccurrenceMessage, Claim, object, datetime]:
    """A job due 30 s ahead (not queued by the API), and a delivery of its occurrence holding its claim."""
    make_collection(rt)
    due = clock.now().replace(microsecond=0) + timedelta(seconds=30)
    put_job(rt, "lapsed", {"action": http(target.url + "/fire"), "startTime": due.isoformat()})
    job = job_status(rt, "lapsed")
    message = OccurrenceMessage(job.key, due, due, generation=job.generation)
    guards = rt.executor.guards
    guard = guards.open(OccurrenceBatch((message,)))
    claim = rt.store.claims.try_claim(job.key, message.claim_id, clock.now(), "holder", guards.lease_until(guard.batch))
    assert isinstance(claim, Claim)
    guard.hold(claim)
    return message, claim, guard, due


def _fire(rt: Runtime, message: OccurrenceMessage, claim: Claim, guard: object) -> object:
    attempts = rt.executor.attempts
    job = job_status(rt, message.job.job)
    prepared = attempts.prepared(message, job, claim, guard)  # type: ignore[arg-type]
    assert prepared is not None
    return asyncio.run(attempts.fire(message, prepared, guard))  # type: ignore[arg-type]


def test_an_attempt_another_worker_took_over_after_its_lease_ran_out_is_not_fired(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    message, claim, guard, due = _held(rt, clock, target)
    # Its holder renewed nothing (starved): the lease runs out, another worker waits out the takeover and takes it.
    clock.current = due + rt.settings.timings.claim_lease + rt.settings.timings.takeover_wait + timedelta(seconds=1)
    expired = rt.store.claims.try_claim(message.job, message.claim_id, clock.now(), "taker")
    assert isinstance(expired, Expired)
    taken = rt.store.claims.take_over(expired, clock.now() + timedelta(seconds=6))
    assert taken is not None

    assert _fire(rt, message, claim, guard) is None
    assert target.hits == []  # the taker runs it; firing it here too ran it twice
    still = rt.store.claims.try_claim(message.job, message.claim_id, clock.now(), "third")
    assert still is None  # the taker's live claim, untouched


def test_an_attempt_whose_lease_ran_out_unclaimed_renews_its_claim_and_fires(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    message, claim, guard, due = _held(rt, clock, target)
    clock.current = due + rt.settings.timings.claim_lease + timedelta(seconds=1)
    before = claim.etag

    fired = _fire(rt, message, claim, guard)
    assert fired is not None
    assert len(target.hits) == 1
    assert claim.etag != before  # renewed before it fired
    # Renewed: another worker finds a live claim, not an expired one to take over.
    assert rt.store.claims.try_claim(message.job, message.claim_id, clock.now(), "taker") is None


def test_an_attempt_within_its_lease_fires_without_asking_storage(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    message, claim, guard, due = _held(rt, clock, target)
    clock.current = due
    before = claim.etag
    assert _fire(rt, message, claim, guard) is not None
    assert len(target.hits) == 1
    assert claim.etag == before  # no renewal on the way
