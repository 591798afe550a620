"""maxJobCount under concurrency: the collection's job counter, kept under its ETag by creates and deletes."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from shared.keys import CollectionKey
from shared.retention import Retention
from shared.runtime import Runtime
from shared.store.storage import Storage
from tests.support.scheduler_client import JC, RG, SUB, call


@pytest.fixture
def storage() -> Storage | None:
    """Azurite: the races these tests start (concurrent creates and deletes) need its real round trips to overlap."""
    return None


ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


def _collection(rt: Runtime, max_jobs: int) -> None:
    answer = call(
        rt,
        "JobCollections_CreateOrUpdate",
        "PUT",
        body={"location": "West US", "properties": {"sku": {"name": "Standard"}, "quota": {"maxJobCount": max_jobs}}},
    )
    assert answer.status == 201, answer.body


def _job(name: str, start: datetime | None = None) -> dict[str, object]:
    start = start or datetime.now(UTC) + timedelta(days=1)
    return {
        "properties": {
            "startTime": start.replace(microsecond=0).isoformat(),
            "recurrence": {"frequency": "Hour"},
            "action": ACTION,
        }
    }


def _stored_count(rt: Runtime) -> tuple[int | None, int]:
    key = CollectionKey(SUB, RG, JC)
    collection = rt.store.collections.get(key)
    assert collection is not None
    return collection.job_count, len(rt.store.jobs.all(key))


def test_forty_concurrent_creates_against_max_job_count_twenty_create_exactly_twenty(runtime) -> None:
    _collection(runtime, 20)
    with ThreadPoolExecutor(max_workers=40) as pool:
        answers = list(
            pool.map(lambda i: call(runtime, "Jobs_CreateOrUpdate", "PUT", f"job{i}", _job(f"job{i}")), range(40))
        )
    statuses = sorted(a.status for a in answers)
    assert statuses == [201] * 20 + [409] * 20, statuses
    assert all("maxJobCount 20" in a.body["error"]["message"] for a in answers if a.status == 409)
    assert _stored_count(runtime) == (20, 20)


def test_deletes_give_places_back_once(runtime) -> None:
    _collection(runtime, 3)
    for i in range(3):
        assert call(runtime, "Jobs_CreateOrUpdate", "PUT", f"j{i}", _job(f"j{i}")).status == 201
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j3", _job("j3")).status == 409
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j0", _job("j0")).status == 200  # a replace needs no place
    # The same job deleted twice counts once: only the delete that removed it gives the place back. (Sequential:
    # Azurite has been seen to answer two simultaneous deletes of one entity both with success, which Azure does not.)
    assert [call(runtime, "Jobs_Delete", "DELETE", "j1").status for _ in range(2)] == [200, 404]
    assert _stored_count(runtime) == (2, 2)
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j3", _job("j3")).status == 201
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j4", _job("j4")).status == 409
    assert _stored_count(runtime) == (3, 3)


def test_concurrent_creates_of_one_job_take_one_place(runtime) -> None:
    _collection(runtime, 5)
    with ThreadPoolExecutor(max_workers=10) as pool:
        answers = list(pool.map(lambda _: call(runtime, "Jobs_CreateOrUpdate", "PUT", "same", _job("same")), range(10)))
    assert {a.status for a in answers} <= {200, 201, 409}
    assert [a.status for a in answers].count(201) == 1
    assert _stored_count(runtime) == (1, 1)


def test_a_rejected_create_takes_no_place(runtime) -> None:
    _collection(runtime, 1)
    bad = {"properties": {"recurrence": {"frequency": "Minute", "interval": 0}, "action": ACTION}}
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "bad", bad).status == 400
    assert _stored_count(runtime) == (0, 0)
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "good", _job("good")).status == 201


def test_collection_writes_keep_the_count_and_a_legacy_collection_is_counted_once(runtime) -> None:
    _collection(runtime, 2)
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "a", _job("a")).status == 201
    patched = call(runtime, "JobCollections_Patch", "PATCH", body={"tags": {"team": "x"}})
    assert patched.status == 200, patched.body
    assert _stored_count(runtime) == (1, 1)
    # A collection stored before the counter existed has no JobCount: the next create counts its jobs.
    entity = runtime.store.collections.table.get("sub-1", "rg-1|jc1")
    assert entity is not None
    runtime.store.collections.table.upsert({k: v for k, v in entity.items() if k != "JobCount"})
    assert _stored_count(runtime) == (None, 1)
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "b", _job("b")).status == 201
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "c", _job("c")).status == 409
    assert _stored_count(runtime) == (2, 2)


def test_retention_gives_back_the_place_of_a_finished_job(settings, clock) -> None:
    rt = Runtime.create(settings, clock)
    _collection(rt, 1)
    past = clock.now() - timedelta(days=90)
    ended = {
        "properties": {
            "startTime": past.replace(microsecond=0).isoformat(),
            "action": ACTION,
            "recurrence": {"frequency": "Hour", "endTime": (past + timedelta(hours=1)).isoformat()},
        }
    }
    created = call(rt, "Jobs_CreateOrUpdate", "PUT", "ended", ended)
    assert created.status == 201 and created.body["properties"]["state"] == "completed", created.body
    clock.advance(timedelta(days=61))
    assert Retention(rt.store, clock).run().jobs_deleted == 1
    assert _stored_count(rt) == (0, 0)
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "next", _job("next", clock.now() + timedelta(days=1))).status == 201
