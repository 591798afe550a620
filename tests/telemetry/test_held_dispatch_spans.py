"""A dispatch task that holds an advance back (`advance_settle`) is traced in two spans, both children of the tick
that sent it: the dispatch, which counts the occurrences of the jobs it advanced at once (here none), and the held
advances after the wait, which count theirs; the dispatcher's occurrences histogram gets a point from each, so a
tick's sum stays whole. On the memory store and a clock the test moves."""

from __future__ import annotations

import threading
from datetime import timedelta

from shared.manual_clock import ManualClock
from shared.runtime import Runtime
from shared.store import bucket_of
from shared.store.queues import ShardTask
from tests.support.manual_time import START, manual_clock, manual_runtime, step_until  # noqa: F401 (fixtures `clock`, `rt`)
from tests.support.scheduler_client import call, make_collection

SOON = START.replace(minute=2, second=5)  # the job's first occurrence
TICK_PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"  # the tick's, as a task message carries it


def test_a_task_that_held_an_advance_back_has_a_span_for_it_under_the_same_tick(
    rt: Runtime, clock: ManualClock, otel
) -> None:
    make_collection(rt, "P20Premium")
    action = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}
    body = {"properties": {"startTime": SOON.isoformat(), "recurrence": {"frequency": "Minute"}, "action": action}}
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "soon", body).status == 201
    clock.advance_to(START.replace(minute=1, second=0))
    rt.dispatcher.tick()  # in process: the first occurrences queued, nothing held
    otel.spans_exporter.clear()
    before = otel.points("scheduler.dispatcher.occurrences")
    assert before and before[0].sum == 1
    clock.advance_to(SOON - timedelta(seconds=3))  # `soon` fires in 3 s: its advance waits
    ahead = bucket_of(SOON + timedelta(minutes=1))
    (shard,) = [s for s in range(rt.settings.due_shards) if rt.store.due.entries(ahead, s)]
    task = ShardTask(ahead, shard, traceparent=TICK_PARENT)
    worker = threading.Thread(target=rt.dispatcher.run_task, args=(task,), daemon=True)
    worker.start()
    step_until(clock, lambda: not worker.is_alive(), step=0.25)

    dispatch, held = sorted(otel.spans("dispatch task"), key=lambda span: span.start_time or 0)
    assert dispatch.attributes is not None and held.attributes is not None
    assert dispatch.attributes["scheduler.dispatch.enqueued"] == 0  # sent, but counted once advanced
    assert held.attributes["scheduler.dispatch.enqueued"] == 1  # advanced after the wait
    assert (dispatch.end_time or 0) <= (held.start_time or 0)
    tick_span = int(TICK_PARENT.split("-")[2], 16)
    assert all(span.parent is not None and span.parent.span_id == tick_span for span in (dispatch, held))
    (points,) = otel.points("scheduler.dispatcher.occurrences")
    assert points.sum == 1 + 1 and points.count == before[0].count + 2  # the tick's tasks, then the task's two
