"""Batches a process receives at the same moment (a second's occurrences come in one message per due-index shard)
read their collection's jobs in one query and claim their attempts in one transaction, not a read and a
transaction per batch; each batch still fires its own occurrences once. A lone job is read by itself, not by a
query. In-process on the memory store and a ManualClock (tests/support/manual_time.py), against a real local HTTP
target: the gathering windows and the wait for the second are ours, so the clock moves in steps while the batches
run."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from shared.executor import Executor
from shared.keys import CollectionKey, JobKey
from shared.manual_clock import ManualClock
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.store import Claim, ClaimStore, Expired, JobStore
from shared.store.claims import Wanted
from tests.executor.peers.servers import Server
from tests.executor.support import http, job_status, make_collection, put_job
from tests.support.manual_time import on_the_clock

LEAD = 5.0  # every batch read and claimed well before its second


class _CountedJobs(JobStore):
    def __init__(self, inner: JobStore) -> None:
        self.__dict__.update(inner.__dict__)
        self.queries: list[int] = []
        self.reads = 0
        self._lock = threading.Lock()

    def get(self, key: JobKey) -> JobRecord | None:
        with self._lock:
            self.reads += 1
        return super().get(key)

    def get_many(self, collection: CollectionKey, keys: list[JobKey]) -> dict[JobKey, JobRecord | None]:
        with self._lock:
            self.queries.append(len(keys))
        return super().get_many(collection, keys)


class _CountedClaims(ClaimStore):
    def __init__(self, inner: ClaimStore) -> None:
        self.__dict__.update(inner.__dict__)
        self.transactions: list[int] = []

    def claim_each(self, wanted: Sequence[Wanted], now: datetime) -> list[Claim | Expired | None]:
        self.transactions.append(len(wanted))
        return super().claim_each(wanted, now)


def _batches(rt: Runtime, groups: list[list[str]]) -> list[OccurrenceBatch]:
    due = rt.clock.now().replace(microsecond=0) + timedelta(seconds=LEAD)
    batches = []
    for names in groups:
        jobs = [job_status(rt, name) for name in names]
        batches.append(
            OccurrenceBatch(tuple(OccurrenceMessage(j.key, due, due, generation=j.generation) for j in jobs))
        )
    return batches


def _executor(rt: Runtime) -> tuple[Executor, _CountedJobs, _CountedClaims]:
    jobs, claims = _CountedJobs(rt.store.jobs), _CountedClaims(rt.store.claims)
    store = replace(rt.store, jobs=jobs, claims=claims)
    return Executor(store, rt.clock, rt.executor.attempts.actions, rt.settings), jobs, claims


def test_batches_received_together_read_and_claim_their_collection_together(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    make_collection(rt, "P20Premium")
    groups = [["a1", "a2"], ["b1", "b2"], ["c1"]]  # three shards' batches of one second
    tomorrow = (rt.clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()
    for name in (n for g in groups for n in g):
        put_job(rt, name, {"startTime": tomorrow, "action": http(f"{target.url}/{name}")})
    executor, jobs, claims = _executor(rt)
    batches = _batches(rt, groups)

    async def received_together() -> None:
        await asyncio.gather(*(executor.run_batch(batch, f"delivery-{n}") for n, batch in enumerate(batches)))

    on_the_clock(clock, lambda: asyncio.run(received_together()))
    assert jobs.queries == [5] and jobs.reads == 0
    assert claims.transactions == [5]
    assert sorted(hit.path for hit in target.hits) == sorted(f"/{n}" for g in groups for n in g)  # each once
    assert all(job_status(rt, n).execution_count == 1 for g in groups for n in g)


def test_a_lone_job_is_read_by_itself(rt: Runtime, clock: ManualClock, target: Server) -> None:
    make_collection(rt, "P20Premium")
    tomorrow = (rt.clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()
    put_job(rt, "only", {"startTime": tomorrow, "action": http(f"{target.url}/only")})
    executor, jobs, claims = _executor(rt)
    on_the_clock(clock, lambda: executor.run(_batches(rt, [["only"]])[0]))
    assert jobs.queries == [] and jobs.reads == 1 and claims.transactions == [1]
    assert [hit.path for hit in target.hits] == ["/only"]


def test_copies_of_an_occurrence_received_together_fire_once(rt: Runtime, clock: ManualClock, target: Server) -> None:
    # Two hosts dispatching one shard at once queue its occurrences twice; one process may receive both copies
    # in the same moment, and their claims then meet in one transaction, which may not name a row twice.
    make_collection(rt, "P20Premium")
    tomorrow = (rt.clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()
    for name in ("d1", "d2", "d3"):
        put_job(rt, name, {"startTime": tomorrow, "action": http(f"{target.url}/{name}")})
    executor, _, claims = _executor(rt)
    batches = _batches(rt, [["d1", "d2"], ["d2", "d3"], ["d1"]])

    async def received_together() -> None:
        await asyncio.gather(*(executor.run_batch(batch, f"delivery-{n}") for n, batch in enumerate(batches)))

    on_the_clock(clock, lambda: asyncio.run(received_together()))
    assert claims.transactions == [5]
    assert sorted(hit.path for hit in target.hits) == ["/d1", "/d2", "/d3"]
    assert all(job_status(rt, n).execution_count == 1 for n in ("d1", "d2", "d3"))
