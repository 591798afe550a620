"""The scheduler's metrics, read back from the OpenTelemetry SDK's in-memory reader after real runs."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from shared.model import JobState
from shared.runtime import Runtime
from shared.settings import Settings
from shared.telemetry import ALL_METRICS
from tests.executor.peers.servers import Server, serve
from tests.executor.support import fixed, job_status, make_collection, put_job
from tests.support.scheduler_client import call, drain


@pytest.fixture
def failing() -> Iterator[Server]:
    server = serve(lambda hit: (500, {}, b""))
    yield server
    server.close()


@pytest.fixture
def fine() -> Iterator[Server]:
    server = serve(lambda hit: (200, {}, b""))
    yield server
    server.close()


def _http(url: str) -> dict[str, object]:
    return {"type": "Http", "request": {"uri": url, "method": "POST", "body": "x"}}


def test_executions_lateness_retries_and_faults_are_counted(
    runtime: Runtime, otel, failing: Server, fine: Server
) -> None:
    make_collection(runtime)
    put_job(runtime, "ok", {"action": _http(fine.url)})
    put_job(runtime, "bad", {"action": _http(failing.url)}, retry=fixed(1, 1))
    drain(runtime, 30, until=lambda: all(job_status(runtime, name).state != JobState.ENABLED for name in ("ok", "bad")))

    assert otel.total("scheduler.executions", outcome="succeeded", action_type="Http", action="MainAction") == 1
    assert otel.total("scheduler.executions", outcome="failed", action_type="Http") == 2
    assert otel.total("scheduler.execution.retries", action_type="Http") == 1
    assert otel.total("scheduler.occurrences.faulted", action_type="Http") == 1
    (lateness,) = otel.points("scheduler.execution.lateness")
    assert lateness.count == 3 and lateness.attributes == {"action_type": "Http", "trigger": "schedule"}
    assert lateness.max < 30  # seconds: start minus expected, on a queue polled every 50 ms
    assert otel.total("scheduler.api.requests", **{"scheduler.operation": "Jobs_CreateOrUpdate"}) == 2


def test_a_tick_reports_its_duration_occurrences_backlog_and_poison_depth(
    settings: Settings, clock, otel, fine: Server, storage
) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    start = (clock.now() + timedelta(minutes=5)).replace(second=0, microsecond=0)
    for name in ("a", "b"):
        response = call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            name,
            {"properties": {"startTime": start.isoformat(), "action": _http(fine.url)}},
        )
        assert response.status == 201, response.body
    rt.executor.handle("this is not an occurrence")  # parked in the poison queue
    clock.current = start

    assert rt.dispatcher.tick().enqueued == 2  # the whole tick in this process: its tasks run here

    assert otel.total("scheduler.poison.messages", reason="malformed") == 1
    (duration,) = otel.points("scheduler.dispatcher.tick.duration")
    assert duration.count == 1 and duration.sum > 0
    (occurrences,) = otel.points("scheduler.dispatcher.occurrences")
    assert occurrences.count >= 1 and occurrences.sum == 2  # one point per dispatch task
    assert [p.value for p in otel.points("scheduler.due_index.backlog")] == [0]
    assert [p.value for p in otel.points("scheduler.poison.depth")] == [1]


def test_every_metric_is_documented() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert len(set(ALL_METRICS)) == 21
    assert all(name.startswith("scheduler.") for name in ALL_METRICS)
    assert [name for name in ALL_METRICS if f"| `{name}` |" not in readme] == []
