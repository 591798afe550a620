"""A dispatch task that holds an advance back (`advance_settle`) is traced in two spans, both children of the tick
that sent it: the dispatch, which counts the occurrences of the jobs it advanced at once (here none), and the held
advances after the wait, which count theirs; the dispatcher's occurrences histogram gets a point from each, so a
tick's sum stays whole. On the memory store and a clock the test moves."""

from __future__ import annotations

import threading
from dataclasses import replace

from shared.manual_clock import ManualClock
from shared.runtime import Runtime
from tests.dispatcher.test_held_advance import about_to_fire
from tests.support.manual_time import manual_clock, manual_runtime, step_until  # noqa: F401 (fixtures `clock`, `rt`)

TICK_PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"  # the tick's, as a task message carries it


def test_a_task_that_held_an_advance_back_has_a_span_for_it_under_the_same_tick(
    rt: Runtime, clock: ManualClock, otel
) -> None:
    task = replace(about_to_fire(rt, clock), traceparent=TICK_PARENT)  # `soon` fires in 3 s: its advance waits
    otel.spans_exporter.clear()  # the tick's, in process: the first occurrence queued, nothing held
    before = otel.points("scheduler.dispatcher.occurrences")
    assert before and before[0].sum == 1
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
