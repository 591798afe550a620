"""Long-running completion (request.asyncCompletion) through the queue, executor, recorder and store, and real local
HTTP targets: a `202 Accepted` with Location is polled as queued work until the work's final status; one history
entry and one ledger entry say how it ended; the action is sent once. Failure paths: the deadline, a Location the
egress guard refuses; a 202 without Location is a success as before.

The polls' intervals are ours (a poll is a queue message hidden until due), so the tests run on the memory store and
a ManualClock (tests/support/manual_time.py), the clock moving in steps while the queue trigger is played; the
targets stay real. One case runs on Azurite too (`either`): the real queue delivers the polls the same way."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.actions import Accepted, ActionRunner, ExecutionContext
from shared.keys import JobKey
from shared.manual_clock import ManualClock
from shared.model import PREVIEW_API_VERSION, JobAction, JobExecutionStatus
from shared.occurrence import OccurrenceMessage, PollState, Trigger
from shared.private_targets import PrivateTargets
from shared.runtime import Runtime
from tests.executor.peers.servers import Hit, Server, serve
from tests.support.manual_time import drain_in_its_time, on_the_clock
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
KEY = JobKey(SUB, RG, JC, "j")


class AsyncTarget:
    """An asynchronous API: POST /work answers 202 with Location /status/<n> and Retry-After 1; the status
    answers 202 (with Retry-After `status_retry_after`) until its `polls`-th GET, then `final`."""

    def __init__(self, polls: int = 5, final: int = 200, location: bool = True, status_retry_after: int = 1) -> None:
        self.polls, self.final, self.location = polls, final, location
        self.status_retry_after = status_retry_after
        self.lock = threading.Lock()
        self.server: Server = serve(self._answer)

    def _answer(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        if hit.method == "POST":
            headers = {"Retry-After": "1", **({"Location": "/status/1"} if self.location else {})}
            return 202, headers, b"accepted"
        with self.lock:
            done = len(self.gets()) >= self.polls
        if done:
            return self.final, {"Content-Type": "text/plain"}, b"the work is done"
        return 202, {"Retry-After": str(self.status_retry_after), "Location": "/status/1"}, b"still working"

    def posts(self) -> list[Hit]:
        return [hit for hit in list(self.server.hits) if hit.method == "POST"]

    def gets(self) -> list[Hit]:
        return [hit for hit in list(self.server.hits) if hit.method == "GET"]


@pytest.fixture
def target() -> Iterator[AsyncTarget]:
    server = AsyncTarget()
    yield server
    server.server.close()


@pytest.fixture(params=["memory", "azurite"])
def either(request: pytest.FixtureRequest) -> Runtime:
    """The memory deployment on a ManualClock, or one on Azurite in real time (the `runtime` fixture)."""
    runtime: Runtime = request.getfixturevalue("rt" if request.param == "memory" else "runtime")
    return runtime


def create_job(rt: Runtime, url: str, completion: dict[str, Any], **request: Any) -> None:
    make_collection(rt)
    body = {
        "properties": {
            "startTime": (rt.clock.now() + timedelta(days=1)).isoformat(),  # the test queues the occurrence
            "action": {
                "type": "Http",
                "request": {"uri": f"{url}/work", "method": "POST", "asyncCompletion": completion, **request},
                "retryPolicy": {"retryType": "None"},
            },
        }
    }
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "j", body, query=NEWER).status == 201


def queue_occurrence(rt: Runtime, at: datetime) -> None:
    job = rt.store.jobs.get(KEY)
    assert job is not None
    rt.store.queue.send(OccurrenceMessage(KEY, at, at, Trigger.RUN_NOW, generation=job.generation), at)


def ended(rt: Runtime) -> bool:
    entries, _ = rt.store.history.ledger_page(KEY, None, None, None, 10)
    return bool(entries) and entries[0].status not in (JobExecutionStatus.RUNNING, JobExecutionStatus.WAITING)


def test_a_202_polled_five_times_is_one_occurrence_with_the_final_status(rt: Runtime, target: AsyncTarget) -> None:
    auth = {"type": "Basic", "username": "u", "password": "p-secret"}
    create_job(rt, target.server.url, {"pollingInterval": "PT5S"}, authentication=auth)
    queue_occurrence(rt, rt.clock.now())
    drain_in_its_time(rt, lambda: ended(rt))
    assert len(target.posts()) == 1 and len(target.gets()) == 5
    # The same origin as the action: the polls carry its authentication and the occurrence's identity.
    post = target.posts()[0]
    for get in target.gets():
        assert get.headers["authorization"] == post.headers["authorization"]
        assert get.headers["x-ms-execution-tag"] == post.headers["x-ms-execution-tag"]
        assert get.path == "/status/1"
    history, _ = rt.store.history.page(KEY, None, 10)
    assert [h.status for h in history] == [JobExecutionStatus.COMPLETED]
    assert "the work is done" in history[0].message and "after 5 polls" in history[0].message
    # From the first request to the final status: the Retry-After of 1 s between five polls.
    assert history[0].end_time - history[0].start_time >= timedelta(seconds=5)
    entries, _ = rt.store.history.ledger_page(KEY, None, None, None, 10)
    assert [(e.status, e.attempts) for e in entries] == [(JobExecutionStatus.COMPLETED, 1)]
    job = rt.store.jobs.get(KEY)
    assert job is not None and job.execution_count == 1 and job.failure_count == 0


def test_two_chains_of_polls_of_one_attempt_record_it_once(rt: Runtime) -> None:
    """A poll repeated after a crash (its host died after queueing the next poll, before its claim said done) starts
    a second chain of polls of the same attempt, and both may find the work's end (tests/executor/
    test_polling_crash.py saw it). The attempt is still one history entry and one ledger entry, counted once. Here the
    second chain is a poll message of the same attempt queued beside the first chain's, as the repeat would queue it."""
    work = AsyncTarget(polls=2)  # the first GET answers 202 (its chain polls again), every later one the end
    try:
        create_job(rt, work.server.url, {})
        job = rt.store.jobs.get(KEY)
        assert job is not None
        at = rt.clock.now().replace(microsecond=0)
        message = OccurrenceMessage(KEY, at, at, Trigger.RUN_NOW, generation=job.generation)
        rt.store.queue.send(message, at)
        second = PollState(f"{work.server.url}/status/1", False, at, at, at, count=7)
        rt.store.queue.send(message.polled(second, at + timedelta(seconds=1)), at)
        drain_in_its_time(rt, lambda: len(work.gets()) >= 3 and ended(rt))  # no handler busy, nothing visible
        assert len(work.posts()) == 1 and len(work.gets()) == 3  # both chains polled to the end
        history, _ = rt.store.history.page(KEY, None, 10)
        assert [h.status for h in history] == [JobExecutionStatus.COMPLETED]
        entries, _ = rt.store.history.ledger_page(KEY, None, None, None, 10)
        assert [e.status for e in entries] == [JobExecutionStatus.COMPLETED]
        counted = rt.store.jobs.get(KEY)
        assert counted is not None and (counted.execution_count, counted.failure_count) == (1, 0)
    finally:
        work.server.close()


def test_the_ledger_shows_the_occurrence_running_while_it_is_polled(rt: Runtime) -> None:
    # After its first poll the work asks for a minute: the next poll's message stays hidden, so the drain ends.
    slow = AsyncTarget(polls=1000, status_retry_after=60)
    try:
        create_job(rt, slow.server.url, {})
        queue_occurrence(rt, rt.clock.now())
        drain_in_its_time(rt, lambda: len(slow.gets()) >= 1)
        entries, _ = rt.store.history.ledger_page(KEY, None, None, None, 10)
        assert [e.status for e in entries] == [JobExecutionStatus.RUNNING]
        history, _ = rt.store.history.page(KEY, None, 10)
        assert history == []  # the attempt's entry comes at its end
    finally:
        slow.server.close()


def test_past_the_deadline_the_attempt_fails(rt: Runtime, clock: ManualClock, target: AsyncTarget) -> None:
    create_job(rt, target.server.url, {"deadline": "PT1M"})
    job = rt.store.jobs.get(KEY)
    assert job is not None
    now = clock.now()
    on_the_clock(
        clock, lambda: rt.executor.run(OccurrenceMessage(KEY, now, now, Trigger.RUN_NOW, generation=job.generation))
    )
    assert len(target.posts()) == 1  # the 202; its first poll is queued for a second later
    clock.advance(timedelta(seconds=61))
    drain_in_its_time(rt, lambda: ended(rt))
    history, _ = rt.store.history.page(KEY, None, 10)
    assert [h.status for h in history] == [JobExecutionStatus.FAILED]
    assert "did not complete within PT1M of its 202 Accepted" in history[0].message
    assert len(target.posts()) == 1


def test_a_failing_final_status_fails_the_attempt_and_its_retries_follow_the_real_end(either: Runtime) -> None:
    rt = either
    failing = AsyncTarget(polls=2, final=500)
    try:
        create_job(rt, failing.server.url, {})
        job = rt.store.jobs.get(KEY)
        assert job is not None
        queue_occurrence(rt, rt.clock.now().replace(microsecond=0))
        drain_in_its_time(rt, lambda: ended(rt))
        history, _ = rt.store.history.page(KEY, None, 10)
        assert [h.status for h in history] == [JobExecutionStatus.FAILED] and "after 2 polls" in history[0].message
        assert len(failing.posts()) == 1
    finally:
        failing.server.close()


def test_a_202_without_location_is_a_success_as_before(rt: Runtime) -> None:
    plain = AsyncTarget(location=False)
    try:
        create_job(rt, plain.server.url, {})
        queue_occurrence(rt, rt.clock.now())
        drain_in_its_time(rt, lambda: ended(rt))
        history, _ = rt.store.history.page(KEY, None, 10)
        assert [h.status for h in history] == [JobExecutionStatus.COMPLETED]
        assert len(plain.posts()) == 1 and plain.gets() == []
    finally:
        plain.server.close()


def test_a_location_the_egress_guard_refuses_fails_with_a_clear_message(rt: Runtime) -> None:
    """The guard's own policy (private targets not allowed): the poll is refused before any packet is sent."""
    listener = serve(lambda hit: (200, {}, b""))
    try:
        runner = ActionRunner.from_settings(replace(rt.settings, private_targets=PrivateTargets()))
        action = JobAction.model_validate(
            {
                "type": "Https",
                "request": {"uri": "https://api.example.invalid/work", "method": "POST", "asyncCompletion": {}},
            }
        )
        context = ExecutionContext(KEY, str(uuid.uuid4()), datetime.now(UTC), 0, "West US", str(uuid.uuid4()))
        polled = runner.run_poll(action, context, Accepted(f"{listener.url}/status/1", False))
        assert not polled.succeeded and polled.again is None
        assert "Polling the operation at host '127.0.0.1' was refused" in polled.message
        assert "resolves to an internal address" in polled.message
        assert listener.hits == []
    finally:
        listener.close()


def test_a_location_of_another_origin_gets_no_authentication(rt: Runtime) -> None:
    elsewhere = AsyncTarget(polls=1)
    first = serve(lambda hit: (202, {"Location": f"{elsewhere.server.url}/status/1", "Retry-After": "1"}, b""))
    try:
        auth = {"type": "Basic", "username": "u", "password": "p-secret"}
        create_job(rt, first.url, {}, authentication=auth, headers={"X-Api-Key": "k-secret"})
        queue_occurrence(rt, rt.clock.now())
        drain_in_its_time(rt, lambda: ended(rt))
        assert len(first.hits) == 1 and "authorization" in first.hits[0].headers
        [poll] = elsewhere.gets()
        assert "authorization" not in poll.headers and "x-api-key" not in poll.headers
        assert poll.headers["x-ms-execution-tag"] == first.hits[0].headers["x-ms-execution-tag"]
    finally:
        first.close()
        elsewhere.server.close()


class OperationTarget:
    """An ARM-style asynchronous API: POST /work answers 202 with Azure-AsyncOperation /operations/1 (and a
    Location beside it, which the operation outranks); the operation answers 200 with a status body, `statuses`
    one per GET, the last one repeated."""

    def __init__(self, statuses: list[str]) -> None:
        self.statuses = statuses
        self.lock = threading.Lock()
        self.server: Server = serve(self._answer)

    def _answer(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        if hit.method == "POST":
            return 202, {"Azure-AsyncOperation": "/operations/1", "Location": "/location/1", "Retry-After": "1"}, b""
        with self.lock:
            status = self.statuses[min(len(self.gets()), len(self.statuses)) - 1]
        return 200, {"Content-Type": "application/json"}, json.dumps({"status": status}).encode()

    def gets(self) -> list[Hit]:
        return [hit for hit in list(self.server.hits) if hit.method == "GET"]


@pytest.mark.parametrize(
    ("final", "status"), [("Succeeded", JobExecutionStatus.COMPLETED), ("Failed", JobExecutionStatus.FAILED)]
)
def test_an_azure_async_operation_is_polled_until_its_status_body_says_it_ended(
    rt: Runtime, final: str, status: JobExecutionStatus
) -> None:
    operation = OperationTarget(["InProgress", "Running", final])
    try:  # the operation's answers carry no Retry-After: the pollingInterval paces the polls
        create_job(rt, operation.server.url, {"pollingInterval": "PT1S"})
        queue_occurrence(rt, rt.clock.now())
        drain_in_its_time(rt, lambda: ended(rt))
        assert [get.path for get in operation.gets()] == ["/operations/1"] * 3  # never the Location
        history, _ = rt.store.history.page(KEY, None, 10)
        assert [h.status for h in history] == [status]
        assert f'"status": "{final}"' in history[0].message and "after 3 polls" in history[0].message
    finally:
        operation.server.close()


@pytest.mark.parametrize(
    ("body", "succeeded", "again"),
    [
        (b'{"status": "Succeeded"}', True, False),
        (b'{"status": "succeeded", "endTime": "2026-11-25T10:00:00Z"}', True, False),  # ignoring case
        (b'{"status": "Failed", "error": {"code": "Conflict"}}', False, False),
        (b'{"status": "Canceled"}', False, False),
        (b'{"status": "Cancelled"}', False, False),
        (b'{"status": "InProgress"}', False, True),
        (b'{"status": "Accepted"}', False, True),  # any other status: the work goes on
        (b"{}", False, True),
        (b"not json", False, True),
        (b'["a list"]', False, True),
        (b"[" * 2000, False, True),  # nested past the JSON parser's depth (RecursionError): unreadable, not a crash
    ],
)
def test_an_azure_async_operation_status_body_decides(rt: Runtime, body: bytes, succeeded: bool, again: bool) -> None:
    status = serve(lambda hit: (200, {"Content-Type": "application/json"}, body))
    try:
        runner = ActionRunner.from_settings(rt.settings)
        action = JobAction.model_validate(
            {"type": "Http", "request": {"uri": f"{status.url}/work", "method": "POST", "asyncCompletion": {}}}
        )
        context = ExecutionContext(KEY, str(uuid.uuid4()), datetime.now(UTC), 0, "West US", str(uuid.uuid4()))
        polled = runner.run_poll(action, context, Accepted(f"{status.url}/operations/7", True))
        assert (polled.succeeded, polled.again is not None) == (succeeded, again)
        if again:  # the same operation, polled again
            assert polled.again is not None and polled.again.location == f"{status.url}/operations/7"
            assert polled.again.operation
        assert [hit.path for hit in status.hits] == ["/operations/7"]
    finally:
        status.close()
