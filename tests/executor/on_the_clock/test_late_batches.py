"""Batches received after their second take turns (shared/executor/late_line.py): with room for one late batch, a
process that receives three at once reads and claims them one after the other, the earliest due first, and fires
each occurrence once; with the default room, the same three are claimed together, as batches on time are. In-process
on the memory store and a ManualClock, against a real local HTTP target."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from shared.executor import Executor
from shared.manual_clock import ManualClock
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.store import Claim, ClaimStore, Expired
from shared.store.claims import Wanted
from tests.executor.peers.servers import Server
from tests.executor.support import http, job_status, make_collection, put_job
from tests.support.manual_time import on_the_clock

GROUPS = {30: ["c1", "c2"], 10: ["a1", "a2"], 20: ["b1", "b2"]}  # seconds late -> jobs; received in this order


class _Claims(ClaimStore):
    def __init__(self, inner: ClaimStore) -> None:
        self.__dict__.update(inner.__dict__)
        self.transactions: list[list[str]] = []

    def claim_each(self, wanted: Sequence[Wanted], now: datetime) -> list[Claim | Expired | None]:
        self.transactions.append(sorted(w.job.job for w in wanted))
        return super().claim_each(wanted, now)


def _received_late(rt: Runtime, clock: ManualClock, target: Server, late_batches: int | None) -> _Claims:
    make_collection(rt, "P20Premium")
    tomorrow = (rt.clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()
    for name in (n for names in GROUPS.values() for n in names):
        put_job(rt, name, {"startTime": tomorrow, "action": http(f"{target.url}/{name}")})
    now = rt.clock.now().replace(microsecond=0)
    batches = [
        OccurrenceBatch(
            tuple(
                OccurrenceMessage(j.key, now - timedelta(seconds=late), now - timedelta(seconds=late), generation=g)
                for j, g in ((job_status(rt, n), job_status(rt, n).generation) for n in names)
            )
        )
        for late, names in GROUPS.items()
    ]
    claims = _Claims(rt.store.claims)
    settings = rt.settings if late_batches is None else replace(rt.settings, late_batches=late_batches)
    executor = Executor(replace(rt.store, claims=claims), rt.clock, rt.executor.attempts.actions, settings)

    async def received_together() -> None:
        await asyncio.gather(*(executor.run_batch(batch, f"delivery-{n}") for n, batch in enumerate(batches)))

    on_the_clock(clock, lambda: asyncio.run(received_together()))
    assert sorted(hit.path for hit in target.hits) == sorted(f"/{n}" for names in GROUPS.values() for n in names)
    assert all(job_status(rt, n).execution_count == 1 for names in GROUPS.values() for n in names)
    return claims


def test_late_batches_beyond_the_room_wait_and_go_earliest_first(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    claims = _received_late(rt, clock, target, late_batches=1)
    # The first received runs at once; the two that waited go in due order (30 s late before 20 s late).
    assert claims.transactions == [["c1", "c2"], ["b1", "b2"], ["a1", "a2"]]


def test_late_batches_within_the_room_are_claimed_together(rt: Runtime, clock: ManualClock, target: Server) -> None:
    claims = _received_late(rt, clock, target, late_batches=3)
    assert claims.transactions == [["a1", "a2", "b1", "b2", "c1", "c2"]]
