"""Spans and trace context, with the real OpenTelemetry SDK: from the API call or the dispatcher tick, over the
occurrence queue, through each attempt, to the `traceparent` a local HTTP target receives."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from shared.keys import JobKey
from shared.model import JobState
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.peers.servers import Hit, Server, serve
from tests.executor.support import JC, RG, SUB, fixed, job_status, make_collection, put_job
from tests.support.scheduler_client import call, drain, drain_dispatch


def _answers(*statuses: int):
    remaining = list(statuses)

    def respond(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        return (remaining.pop(0) if len(remaining) > 1 else remaining[0]), {}, b""

    return respond


@pytest.fixture
def target() -> Iterator[Server]:
    server = serve(_answers(500, 200))
    yield server
    server.close()


def _hex(value: int, width: int) -> str:
    return format(value, f"0{width}x")


def _traceparent(span) -> str:
    """Version, trace id and parent id of the traceparent naming `span` (the flags byte follows)."""
    return f"00-{_hex(span.context.trace_id, 32)}-{_hex(span.context.span_id, 16)}"


def test_one_trace_runs_from_the_api_call_through_each_attempt_to_the_target(
    runtime: Runtime, otel, target: Server
) -> None:
    make_collection(runtime)
    put_job(
        runtime,
        "traced",
        {"action": {"type": "Http", "request": {"uri": target.url, "method": "GET"}}},
        retry=fixed(1, 2),
    )
    drain(runtime, 30, until=lambda: job_status(runtime, "traced").state != JobState.ENABLED)

    put = next(s for s in otel.spans("Jobs_CreateOrUpdate"))
    assert put.kind == SpanKind.SERVER
    assert put.attributes["scheduler.job.name"] == "traced"
    assert put.attributes["http.response.status_code"] in (200, 201)
    attempts = sorted(otel.spans("execute occurrence"), key=lambda s: s.attributes["scheduler.attempt"])
    assert [s.attributes["scheduler.outcome"] for s in attempts] == ["failed", "succeeded"]
    first, retry = attempts
    # The first attempt is the child of the API call that queued it; the retry the child of the failed attempt.
    assert first.parent is not None and first.parent.span_id == put.context.span_id
    assert retry.parent is not None and retry.parent.span_id == first.context.span_id
    assert {s.context.trace_id for s in attempts} == {put.context.trace_id}
    assert first.kind == SpanKind.CONSUMER and first.status.status_code == StatusCode.ERROR
    for span in attempts:
        attributes = span.attributes
        assert attributes["scheduler.job.id"] == JobKey(SUB, RG, JC, "traced").resource_id
        assert attributes["scheduler.job.collection"] == JC
        assert attributes["scheduler.action.type"] == "Http"
        assert attributes["scheduler.action"] == "MainAction"
        assert attributes["scheduler.occurrence"] == first.attributes["scheduler.occurrence"]
        assert isinstance(attributes["scheduler.lateness_ms"], int)
    # Each request the target got carries the traceparent of the attempt that sent it.
    assert [hit.headers.get("traceparent", "")[:52] for hit in target.hits] == [_traceparent(s) for s in attempts]


def test_a_tick_fans_out_and_each_dispatch_task_is_the_parent_of_its_occurrences(
    settings: Settings, clock, otel, target: Server, storage
) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    start = (clock.now() + timedelta(minutes=5)).replace(second=0, microsecond=0)
    response = call(
        rt,
        "Jobs_CreateOrUpdate",
        "PUT",
        "later",
        {
            "properties": {
                "startTime": start.isoformat(),
                "action": {"type": "Http", "request": {"uri": target.url, "method": "GET"}},
            }
        },
    )
    assert response.status == 201, response.body
    clock.current = start  # due now: the message is visible at once (the queue's visibility runs on real time)

    report = rt.dispatcher.fan_out()  # the minute timer
    drain_dispatch(rt.dispatcher)  # the dispatch trigger

    (tick,) = otel.spans("dispatcher tick")
    assert tick.attributes["scheduler.tick.tasks"] == report.tasks > 0
    assert tick.attributes["scheduler.backlog"] == 0
    dispatched = otel.spans("dispatch task")
    assert len(dispatched) == report.tasks
    assert all(span.parent is not None and span.parent.span_id == tick.context.span_id for span in dispatched)
    (busy,) = [span for span in dispatched if span.attributes["scheduler.dispatch.enqueued"] == 1]
    (message,) = rt.store.queue.client.peek_messages()
    assert json.loads(message.content)["tp"][:52] == _traceparent(busy)

    rt.executor.handle(message.content)

    (attempt,) = otel.spans("execute occurrence")
    assert attempt.parent is not None and attempt.parent.span_id == busy.context.span_id
    assert attempt.attributes["scheduler.occurrence"] == start.isoformat()
    assert target.hits[0].headers["traceparent"][:52] == _traceparent(attempt)


def test_an_in_process_tick_is_the_parent_of_its_dispatch_tasks(settings: Settings, clock, otel, storage) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    report = rt.dispatcher.tick()
    (tick,) = otel.spans("dispatcher tick")
    tasks = otel.spans("dispatch task")
    assert len(tasks) == report.tasks > 0
    assert all(span.parent is not None and span.parent.span_id == tick.context.span_id for span in tasks)
