"""The collection's state at an occurrence's second (shared/executor/collection_gate.py): what stops a collection
that is not Enabled from running anything while its jobs, whose cascade is still queued, say Enabled. An occurrence
dropped so is named in the ledger (why: CollectionDisabled, CollectionSuspended) and its attempt is done; one of a
collection being deleted leaves nothing behind once the purge ran; a herd of one collection reads it once.

In-process on the memory store and a ManualClock (tests/support/manual_time.py), against real local HTTP targets:
the waits for an occurrence's second are ours, so the clock moves in steps while a batch runs."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

import pytest

from shared.executor import Executor
from shared.keys import CollectionKey
from shared.manual_clock import ManualClock
from shared.model import JobState, LedgerReason
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.records import CollectionRecord
from shared.runtime import Runtime
from shared.store.collections import CollectionStore
from tests.executor.peers.servers import Server
from tests.executor.support import JC, RG, SUB, http, job_status, make_collection, put_job
from tests.support.manual_time import on_the_clock
from tests.support.scheduler_client import call, settle

KEY = CollectionKey(SUB, RG, JC)


def _tomorrow(rt: Runtime) -> str:
    return (rt.clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()


def _batch(rt: Runtime, names: list[str], lead: float = 1.0) -> OccurrenceBatch:
    due = rt.clock.now().replace(microsecond=0) + timedelta(seconds=lead)
    items = []
    for name in names:
        job = job_status(rt, name)
        items.append(OccurrenceMessage(job.key, due, due, generation=job.generation))
    return OccurrenceBatch(tuple(items))


@pytest.mark.parametrize(
    ("state", "reason"),
    [("Disabled", LedgerReason.COLLECTION_DISABLED), ("Suspended", LedgerReason.COLLECTION_SUSPENDED)],
)
def test_an_occurrence_of_a_collection_that_is_not_enabled_is_dropped_at_its_second_and_named_in_the_ledger(
    rt: Runtime, clock: ManualClock, target: Server, state: str, reason: LedgerReason
) -> None:
    make_collection(rt)
    put_job(rt, "j", {"startTime": _tomorrow(rt), "action": http(target.url)})
    batch = _batch(rt, ["j"])
    patched = call(rt, "JobCollections_Patch", "PATCH", body={"properties": {"state": state}})
    assert patched.status == 200
    assert job_status(rt, "j").state == JobState.ENABLED  # a disable's cascade is queued, not run yet
    on_the_clock(clock, lambda: rt.executor.run(batch))
    assert target.hits == []
    entries, _ = rt.store.history.ledger_page(batch.items[0].job, None, None, None, 10)
    assert [(e.occurrence, e.reason) for e in entries] == [(batch.items[0].occurrence, reason)]
    job = job_status(rt, "j")
    assert job.execution_count == 0
    call(rt, "JobCollections_Patch", "PATCH", body={"properties": {"state": "Enabled"}})
    on_the_clock(clock, lambda: settle(rt))
    on_the_clock(clock, lambda: rt.executor.run(batch))  # the same message again (a redelivery): its attempt is done
    assert target.hits == []


def test_an_occurrence_of_a_collection_being_deleted_does_not_run_and_leaves_nothing_behind(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    make_collection(rt)
    put_job(rt, "j", {"startTime": _tomorrow(rt), "action": http(target.url)})
    batch = _batch(rt, ["j"])
    assert call(rt, "JobCollections_Delete", "DELETE").status == 200  # the purge is queued
    on_the_clock(clock, lambda: rt.executor.run(batch))
    assert target.hits == []
    # No ledger row for it (this test's own tables): a row written after the purge would outlive the job.
    assert list(rt.store.history.table.query("PartitionKey ge @lo", {"lo": ""})) == []
    on_the_clock(clock, lambda: settle(rt))
    assert rt.store.collections.get(KEY) is None and rt.store.jobs.all(KEY) == []


class _Counting(CollectionStore):
    """The collections store as it is, counting reads of one collection's row."""

    def __init__(self, inner: CollectionStore) -> None:
        self.__dict__.update(inner.__dict__)
        self.reads = 0
        self._lock = threading.Lock()

    def get(self, key: CollectionKey) -> CollectionRecord | None:
        with self._lock:
            self.reads += 1
        return super().get(key)


def test_a_herd_of_one_collection_reads_the_collection_once_at_its_second(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    make_collection(rt, "P20Premium")
    names = [f"h{n:02}" for n in range(30)]
    for name in names:
        put_job(rt, name, {"startTime": _tomorrow(rt), "action": http(f"{target.url}/{name}")})
    counting = _Counting(rt.store.collections)
    store = replace(rt.store, collections=counting)
    executor = Executor(store, rt.clock, rt.executor.attempts.actions, rt.settings)
    batch = _batch(rt, names, lead=5.0)  # every claim taken well before the second
    on_the_clock(clock, lambda: executor.run(batch))
    assert len(target.hits) == len(names)
    assert counting.reads == 1
    assert all(job_status(rt, name).execution_count == 1 for name in names)
