"""The storage seam carries the whole app: a runtime over `MemoryStorage` (no Azurite, no account) creates a
collection and a job through the API and its lifecycle, and the dispatcher's tick, through the dispatch queue,
puts the job's occurrence on the memory occurrence queue, hidden until just before its second."""

from __future__ import annotations

from datetime import timedelta

from shared.dispatcher import Dispatcher
from shared.keys import CollectionKey
from shared.occurrence import OccurrenceBatch
from shared.private_targets import PrivateTargets
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store.memory import MemoryQueue, MemoryStorage, MemoryTable
from shared.store.sealing import new_key_material
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain_dispatch, make_collection


def test_a_runtime_in_memory_dispatches_a_job_onto_its_queue(clock: ManualClock) -> None:
    settings = Settings(
        storage=StorageSettings(),  # no account at all: nothing may reach for one
        private_targets=PrivateTargets.parse("loopback"),
        secret_keys=new_key_material(),
        dispatch_spread=timedelta(0),
    )
    storage = MemoryStorage(clock)
    rt = Runtime.create(settings, clock, storage=storage)
    assert all(isinstance(table, MemoryTable) for table in rt.store.tables)
    assert isinstance(rt.store.queue.client, MemoryQueue) and isinstance(rt.store.dispatch.client, MemoryQueue)

    make_collection(rt)
    due = clock.now().replace(second=0) + timedelta(minutes=2)
    body = {
        "properties": {
            "startTime": due.isoformat(),
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
        }
    }
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "j1", body).status == 201
    assert [job.key.job for job in rt.store.jobs.all(CollectionKey(SUB, RG, JC))] == ["j1"]

    clock.advance(timedelta(minutes=1))  # the minute ahead now holds the job's second
    dispatcher = Dispatcher(rt.store, clock)
    dispatcher.fan_out()
    assert drain_dispatch(dispatcher).enqueued == 1
    queue = rt.store.queue.client
    assert queue.peek_messages(max_messages=32) == []  # the batch, its watchdog and backstop: all hidden
    assert queue.get_queue_properties().approximate_message_count == 3

    clock.advance(due - clock.now() - settings.timings.early_visibility)
    (message,) = queue.peek_messages(max_messages=32)
    batch = OccurrenceBatch.from_json(message.content)
    assert [(item.job.job, item.due) for item in batch.items] == [("j1", due)]
    assert batch.watchdog is not None and batch.backstop is not None
