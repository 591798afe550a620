"""The minute timer's dispatcher: due buckets, stale entries, and recovery after an outage."""

from __future__ import annotations

from datetime import timedelta

from shared.dispatcher import Dispatcher
from shared.keys import CollectionKey
from shared.runtime import Runtime
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection

HTTP_ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


def queued(rt: Runtime) -> list[str]:
    return [m.content for m in rt.store.queue.client.peek_messages(max_messages=32)]


def test_missed_occurrences_run_once_and_are_recorded_as_postponed(settings, clock, storage) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    start = clock.now().replace(second=0) + timedelta(minutes=3)
    assert (
        call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            "minutely",
            {
                "properties": {
                    "startTime": start.isoformat(),
                    "recurrence": {"frequency": "Minute", "interval": 1},
                    "action": HTTP_ACTION,
                }
            },
        ).status
        == 201
    )
    clock.advance(timedelta(minutes=30))  # the scheduler was down; no tick ran
    dispatcher = Dispatcher(rt.store, clock)
    report = dispatcher.tick()
    assert report.enqueued == 2  # the latest missed occurrence, and its follower within the horizon
    job = rt.store.jobs.all(CollectionKey(SUB, RG, JC))[0]
    latest = clock.now().replace(second=0)
    assert job.dispatched_occurrence == latest + timedelta(minutes=1)
    assert job.next_execution_time == latest + timedelta(minutes=2)
    history = call(rt, "Jobs_ListJobHistory", "GET", "minutely").body["value"]
    assert [h["properties"]["status"] for h in history] == ["Postponed"]
    assert "27 occurrence(s)" in history[0]["properties"]["message"]
    assert dispatcher.tick().enqueued == 0  # the next one lies beyond this tick's horizon
    clock.advance(timedelta(seconds=30))
    assert dispatcher.tick().enqueued == 1


def test_entries_of_deleted_and_rewritten_jobs_are_dropped(settings, clock, storage) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    start = clock.now().replace(second=0) + timedelta(minutes=2)
    body = {"properties": {"startTime": start.isoformat(), "action": HTTP_ACTION}}
    for name in ("gone", "moved"):
        assert call(rt, "Jobs_CreateOrUpdate", "PUT", name, body).status == 201
    assert call(rt, "Jobs_Delete", "DELETE", "gone").status == 200
    later = {"properties": {"startTime": (start + timedelta(hours=1)).isoformat(), "action": HTTP_ACTION}}
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "moved", later).status == 200
    clock.advance(timedelta(minutes=2))
    assert Dispatcher(rt.store, clock).tick().enqueued == 0
    assert queued(rt) == []
