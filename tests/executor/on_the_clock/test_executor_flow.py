"""Retries, the error action, counters and states end to end: API -> queue -> executor -> real local targets.

The retries' intervals are ours (a retry is a queue message hidden until it is due), so the tests that wait for
them run on the memory store and a ManualClock (`rt`; tests/support/manual_time.py): the clock moves in steps while
the queue trigger is played. The others run on the real Azurite queue (`runtime`): the poison queue, duplicate
deliveries claiming at once, a collection's state read from storage."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared.keys import JobKey
from shared.manual_clock import ManualClock
from shared.model import JobCollectionState, JobExecutionStatus, JobHistoryActionName, JobState, RetryPolicy, RetryType
from shared.occurrence import OccurrenceMessage, Trigger
from shared.runtime import Runtime
from tests.executor.peers.servers import Hit, Server, serve
from tests.executor.support import JC, RG, SUB, fixed, history, http, job_status, make_collection, put_job
from tests.support.manual_time import drain_on_the_clock
from tests.support.scheduler_client import drain

MAIN, ERROR = JobHistoryActionName.MAIN_ACTION, JobHistoryActionName.ERROR_ACTION
COMPLETED, FAILED = JobExecutionStatus.COMPLETED, JobExecutionStatus.FAILED


class Scripted:
    """Answers each request with the next status of its script (the last one repeats)."""

    def __init__(self, *statuses: int) -> None:
        self.statuses = list(statuses)

    def __call__(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        return status, {"Content-Type": "text/plain"}, f"answer {status}".encode()


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.close()


def start(servers: list[Server], *statuses: int) -> Server:
    server = serve(Scripted(*statuses))
    servers.append(server)
    return server


def settled(rt: Runtime, name: str) -> bool:
    return job_status(rt, name).state != JobState.ENABLED


def test_retries_run_out_then_the_error_action_runs_and_the_job_faults(
    rt: Runtime, clock: ManualClock, servers
) -> None:
    make_collection(rt)
    main, fallback = start(servers, 500), start(servers, 200)
    put_job(rt, "faulty", {"action": {**http(main.url), "errorAction": http(fallback.url)}}, retry=fixed(1, 4))
    drain_on_the_clock(rt, clock, lambda: settled(rt, "faulty"))

    assert [h.headers["x-ms-scheduler-attempt"] for h in main.hits] == ["1", "2", "3", "4", "5"]
    assert len({h.headers["x-ms-execution-tag"] for h in main.hits + fallback.hits}) == 1  # one occurrence
    assert len({h.headers["x-ms-client-request-id"] for h in main.hits}) == 5  # new per attempt
    assert len(fallback.hits) == 1
    job = job_status(rt, "faulty")
    assert job.state == JobState.FAULTED  # its only (so last) occurrence faulted
    # Attempts of both actions count as executions; the one occurrence counts as faulted once.
    assert (job.execution_count, job.failure_count, job.faulted_count) == (6, 5, 1)
    entries = history(rt, "faulty")
    assert [(e.action_name, e.status, e.retry_count, e.repeat_count) for e in entries] == [
        (ERROR, COMPLETED, 0, 1),
        (MAIN, FAILED, 4, 1),
        (MAIN, FAILED, 3, 1),
        (MAIN, FAILED, 2, 1),
        (MAIN, FAILED, 1, 1),
        (MAIN, FAILED, 0, 1),
    ]
    assert entries[1].message.startswith("Http Action - Response from host '127.0.0.1': 'Internal Server Error'")
    assert entries[1].message.endswith("Body: answer 500")
    starts = sorted(e.start_time for e in entries if e.action_name == MAIN)
    gaps = [(b - a).total_seconds() for a, b in zip(starts, starts[1:], strict=False)]
    assert all(0.9 <= gap < 2.5 for gap in gaps), gaps


def test_the_documented_sample_five_five_one(rt: Runtime, clock: ManualClock, servers) -> None:
    """wire-contract.md §3.7: failing with the default retries shows executionCount 5, failureCount 5, faulted 1."""
    make_collection(rt)
    target = start(servers, 500)
    policy = RetryPolicy(retry_type=RetryType.FIXED, retry_interval=timedelta(seconds=1))  # count: the default 4
    put_job(rt, "sample", {"action": http(target.url)}, retry=policy)
    drain_on_the_clock(rt, clock, lambda: settled(rt, "sample"))
    job = job_status(rt, "sample")
    assert (job.state, job.execution_count, job.failure_count, job.faulted_count) == (JobState.FAULTED, 5, 5, 1)


def test_success_on_a_retry_completes_the_job(rt: Runtime, clock: ManualClock, servers) -> None:
    make_collection(rt)
    target = start(servers, 500, 502, 200)
    exponential = RetryPolicy(
        retry_type=RetryType.EXPONENTIAL,
        retry_interval=timedelta(seconds=0.5),
        retry_count=5,
        max_retry_interval=timedelta(seconds=0.8),
    )
    put_job(rt, "flaky", {"action": http(target.url)}, retry=exponential)
    drain_on_the_clock(rt, clock, lambda: settled(rt, "flaky"))
    job = job_status(rt, "flaky")
    assert (job.state, job.execution_count, job.failure_count, job.faulted_count) == (JobState.COMPLETED, 3, 2, 0)
    assert [(e.status, e.retry_count) for e in history(rt, "flaky")] == [(COMPLETED, 2), (FAILED, 1), (FAILED, 0)]
    assert [h.headers["x-ms-scheduler-attempt"] for h in target.hits] == ["1", "2", "3"]


def test_a_faulted_occurrence_of_a_continuing_recurrence_leaves_the_job_enabled(
    rt: Runtime, clock: ManualClock, servers
) -> None:
    make_collection(rt)
    main, fallback = start(servers, 500), start(servers, 500)
    put_job(
        rt,
        "hourly",
        {
            "recurrence": {"frequency": "Hour", "interval": 1},
            "action": {**http(main.url), "retryPolicy": {"retryType": "None"}, "errorAction": http(fallback.url)},
        },
        error_retry=fixed(0.5, 1),
    )
    drain_on_the_clock(rt, clock, lambda: len(history(rt, "hourly")) == 3)
    job = job_status(rt, "hourly")
    assert job.state == JobState.ENABLED and job.next_execution_time is not None
    assert (job.execution_count, job.failure_count, job.faulted_count) == (3, 3, 1)
    assert [(e.action_name, e.retry_count) for e in history(rt, "hourly")] == [(ERROR, 1), (ERROR, 0), (MAIN, 0)]
    assert len(main.hits) == 1 and len(fallback.hits) == 2


@pytest.mark.parametrize("state", [JobCollectionState.SUSPENDED, JobCollectionState.DISABLED])
def test_a_suspended_or_disabled_collection_runs_nothing(runtime: Runtime, servers, state) -> None:
    make_collection(runtime)
    target = start(servers, 200)
    put_job(runtime, "gated", {"action": http(target.url)})  # its occurrence is already queued
    collection = runtime.store.collections.get(JobKey(SUB, RG, JC, "gated").collection_key)
    assert collection is not None
    runtime.store.collections.replace(replace(collection, state=state))
    assert drain(runtime, 5, until=lambda: True) == 1
    assert target.hits == [] and job_status(runtime, "gated").execution_count == 0


def test_run_now_runs_a_disabled_job_without_changing_its_state(runtime: Runtime, servers) -> None:
    make_collection(runtime)
    target = start(servers, 200)
    start_time = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    job = put_job(
        runtime, "manual", {"startTime": start_time.isoformat(), "state": "Disabled", "action": http(target.url)}
    )
    now = datetime.now(UTC).replace(microsecond=0)
    runtime.store.queue.send(OccurrenceMessage(job.key, now, now, Trigger.RUN_NOW, generation=job.generation), now)
    drain(runtime, 10, until=lambda: len(target.hits) == 1)
    after = job_status(runtime, "manual")
    assert len(target.hits) == 1 and after.state == JobState.DISABLED and after.execution_count == 1
    assert after.next_execution_time == job.next_execution_time


def test_malformed_messages_go_to_the_poison_queue_and_work_continues(runtime: Runtime, servers) -> None:
    make_collection(runtime)
    target = start(servers, 200)
    runtime.store.queue.client.send_message("this is not an occurrence")
    runtime.store.queue.client.send_message('{"v": 99}')
    put_job(runtime, "after-poison", {"action": http(target.url)})
    drain(runtime, 10, until=lambda: settled(runtime, "after-poison"))
    assert len(target.hits) == 1
    poisoned = sorted(m.content for m in runtime.store.queue.poison_client.receive_messages(max_messages=10))
    assert poisoned == ["this is not an occurrence", '{"v": 99}']


def test_concurrent_duplicate_deliveries_run_once(runtime: Runtime, servers) -> None:
    make_collection(runtime)
    target = serve(Scripted(200))
    servers.append(target)
    put_job(runtime, "dup", {"action": http(target.url)})
    [message] = list(runtime.store.queue.client.receive_messages(visibility_timeout=60))
    workers = [threading.Thread(target=runtime.executor.handle, args=(message.content,)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(target.hits) == 1 and job_status(runtime, "dup").execution_count == 1
