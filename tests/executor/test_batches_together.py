"""Batches a process receives at the same moment (a second's occurrences come in one message per due-index shard)
read their collection's jobs in one query and claim their attempts in one transaction, not a read and a
transaction per batch; each batch still fires its own occurrences once. A lone job is read by itself, not by a
query. In-process on the session's Azurite, against a real local HTTP target."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from shared.executor import Executor
from shared.keys import CollectionKey, JobKey
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.store import Claim, ClaimStore, Expired, JobStore
from shared.store.claims import Wanted
from tests.executor.peers.servers import Server
from tests.executor.support import http, job_status, make_collection, put_job

LEAD = 5.0  # every batch read and claimed well before its second, on a busy machine too


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
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=LEAD)
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


def test_batches_received_together_read_and_claim_their_collection_together(runtime: Runtime, target: Server) -> None:
    make_collection(runtime, "P20Premium")
    groups = [["a1", "a2"], ["b1", "b2"], ["c1"]]  # three shards' batches of one second
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()
    for name in (n for g in groups for n in g):
        put_job(runtime, name, {"startTime": tomorrow, "action": http(f"{target.url}/{name}")})
    executor, jobs, claims = _executor(runtime)
    batches = _batches(runtime, groups)

    async def received_together() -> None:
        await asyncio.gather(*(executor.run_batch(batch, f"delivery-{n}") for n, batch in enumerate(batches)))

    asyncio.run(received_together())
    assert jobs.queries == [5] and jobs.reads == 0
    assert claims.transactions == [5]
    assert sorted(hit.path for hit in target.hits) == sorted(f"/{n}" for g in groups for n in g)  # each once
    assert all(job_status(runtime, n).execution_count == 1 for g in groups for n in g)


def test_a_lone_job_is_read_by_itself(runtime: Runtime, target: Server) -> None:
    make_collection(runtime, "P20Premium")
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()
    put_job(runtime, "only", {"startTime": tomorrow, "action": http(f"{target.url}/only")})
    executor, jobs, claims = _executor(runtime)
    executor.run(_batches(runtime, [["only"]])[0])
    assert jobs.queries == [] and jobs.reads == 1 and claims.transactions == [1]
    assert [hit.path for hit in target.hits] == ["/only"]


def test_copies_of_an_occurrence_received_together_fire_once(runtime: Runtime, target: Server) -> None:
    # Two hosts dispatching one shard at once queue its occurrences twice; one process may receive both copies
    # in the same moment, and their claims then meet in one transaction, which may not name a row twice.
    make_collection(runtime, "P20Premium")
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()
    for name in ("d1", "d2", "d3"):
        put_job(runtime, name, {"startTime": tomorrow, "action": http(f"{target.url}/{name}")})
    executor, _, claims = _executor(runtime)
    batches = _batches(runtime, [["d1", "d2"], ["d2", "d3"], ["d1"]])

    async def received_together() -> None:
        await asyncio.gather(*(executor.run_batch(batch, f"delivery-{n}") for n, batch in enumerate(batches)))

    asyncio.run(received_together())
    assert claims.transactions == [5]
    assert sorted(hit.path for hit in target.hits) == ["/d1", "/d2", "/d3"]
    assert all(job_status(runtime, n).execution_count == 1 for n in ("d1", "d2", "d3"))
