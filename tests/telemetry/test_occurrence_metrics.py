"""Occurrence accounting per collection (expected, dispatched, fired, succeeded, skipped by reason) and the
overdue age, read back from the OpenTelemetry SDK's in-memory reader after real runs on the memory store."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

from shared import telemetry
from shared.keys import CollectionKey, JobKey
from shared.model import JobState
from shared.runtime import Runtime
from tests.executor.peers.servers import Server, serve
from tests.executor.support import JC, RG, SUB, call, http, job_status, make_collection, put_job
from tests.support.scheduler_client import drain
from tests.telemetry.conftest import Collected

REPO = Path(__file__).resolve().parents[2]
COLLECTION = {"scheduler.collection": CollectionKey(SUB, RG, JC).resource_id}


@pytest.fixture
def fine() -> Iterator[Server]:
    server = serve(lambda hit: (200, {}, b""))
    yield server
    server.close()


@pytest.fixture
def failing() -> Iterator[Server]:
    server = serve(lambda hit: (500, {}, b""))
    yield server
    server.close()


def test_expected_dispatched_fired_succeeded_and_skipped_are_counted_per_collection(
    runtime: Runtime, otel: Collected, fine: Server, failing: Server
) -> None:
    make_collection(runtime)
    put_job(runtime, "ok", {"action": http(fine.url)})
    put_job(runtime, "bad", {"action": {**http(failing.url), "retryPolicy": {"retryType": "None"}}})
    put_job(runtime, "gone", {"action": http(fine.url)})
    assert call(runtime, "Jobs_Delete", "DELETE", "gone").status == 200  # its queued occurrence finds no job
    drain(runtime, 30, until=lambda: all(job_status(runtime, name).state != JobState.ENABLED for name in ("ok", "bad")))

    assert otel.total("scheduler.occurrences.expected", **COLLECTION) == 3
    assert otel.total("scheduler.occurrences.dispatched", **COLLECTION) == 3
    assert otel.total("scheduler.occurrences.fired", **COLLECTION, trigger="schedule") == 2
    assert otel.total("scheduler.occurrences.succeeded", **COLLECTION) == 1
    assert otel.total("scheduler.occurrences.skipped", **COLLECTION, reason="job_changed") == 1
    assert all(
        set(p.attributes) <= {"scheduler.collection", "trigger", "reason"}
        for name in ("expected", "dispatched", "fired", "succeeded", "skipped")
        for p in otel.points(f"scheduler.occurrences.{name}")
    )  # no job ids unless asked
    assert job_status(runtime, "ok").last_success_time is not None  # what an expectation counts from
    assert job_status(runtime, "bad").last_success_time is None


def test_missed_occurrences_are_expected_and_skipped_and_the_overdue_age_is_measured(
    settings, clock, otel: Collected, storage
) -> None:
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
                    "action": http("http://127.0.0.1:9/"),
                }
            },
        ).status
        == 201
    )
    clock.advance(timedelta(minutes=30))  # the scheduler was down; no tick ran

    overdue = rt.store.jobs.get(JobKey(SUB, RG, JC, "minutely"))
    assert overdue is not None and overdue.next_execution_time is not None
    assert rt.dispatcher.fan_out().observation is not None  # the heartbeat sees the entry before any dispatch
    (age,) = otel.points("scheduler.occurrences.overdue_age")
    assert age.attributes == COLLECTION
    assert age.value == (clock.now() - overdue.next_execution_time).total_seconds() == 27 * 60 + 30

    assert rt.dispatcher.tick().enqueued == 2  # the latest missed occurrence, and its follower within the horizon
    assert otel.total("scheduler.occurrences.skipped", **COLLECTION, reason="missed") == 27
    assert otel.total("scheduler.occurrences.expected", **COLLECTION) == 29
    assert otel.total("scheduler.occurrences.dispatched", **COLLECTION) == 2
    assert [p.value for p in otel.points("scheduler.occurrences.overdue_age")] == [0]  # caught up: set back to 0
    assert otel.total("scheduler.dispatcher.heartbeats") == 2


@pytest.fixture
def per_job() -> Iterator[Collected]:
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    telemetry.use_providers(TracerProvider(), meter_provider, per_job=True)  # SCHEDULER_METRICS_PER_JOB=true
    try:
        yield Collected(None, reader)  # type: ignore[arg-type]
    finally:
        telemetry.disable()
        meter_provider.shutdown()


def test_per_job_counts_only_when_the_setting_asks(runtime: Runtime, per_job: Collected, fine: Server) -> None:
    make_collection(runtime)
    put_job(runtime, "ok", {"action": http(fine.url)})
    drain(runtime, 30, until=lambda: job_status(runtime, "ok").state != JobState.ENABLED)
    job = JobKey(SUB, RG, JC, "ok").resource_id
    assert per_job.total("scheduler.occurrences.succeeded", **COLLECTION, **{"scheduler.job.id": job}) == 1


def test_telemetry_records_only_what_it_is_handed() -> None:
    """No storage in shared/telemetry: the dispatcher writes the heartbeat and hands over what it saw."""
    imported: set[str] = set()
    for path in (REPO / "shared" / "telemetry").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                imported.add("." * node.level + (node.module or ""))
                imported.update(f"{'.' * node.level}{node.module or ''}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    storage = [
        name
        for name in imported
        if any(part in name for part in ("store", "health", "azure.data", "azure.storage", "dispatcher"))
    ]
    assert storage == []
