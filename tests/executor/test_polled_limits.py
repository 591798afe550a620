"""The collection's limits for an asynchronous target's work (request.asyncCompletion): the attempt's concurrency slot
is held from its first request until the work ends (a poll asks for none of its own), and each poll takes a rate
slot of the host it polls, the Location's, not the action's.

One instance on the session's Azurite; real local HTTP targets: the action's host (127.0.0.1) answers 202 with a
Location on another host name (localhost, the same loopback listener of its own) that answers 202 twice, then 200.
The collection allows one execution at a time and paces `localhost` (not 127.0.0.1) to 0.5 requests a second."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from shared.keys import JobKey
from shared.model import JobExecutionStatus, WaitCause
from shared.occurrence import OccurrenceBatch, OccurrenceMessage, Trigger
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.instances import failures, instances
from tests.executor.peers.servers import Hit, Server, serve
from tests.executor.support import JC, RG, SUB, job_status, put_job
from tests.executor.test_rate_limit import limited_collection

POLL_RATE = 0.5  # requests a second to the Location's host: polls at least ~2 s apart (their Retry-After is 1 s)
PATIENCE = 90.0


class Operation:
    """The status of the accepted work at `localhost`: 202 (Retry-After 1) twice, then 200."""

    def __init__(self) -> None:
        self.server: Server = serve(self._answer)
        self.url = self.server.url.replace("127.0.0.1", "localhost")

    def _answer(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        if len(self.server.hits) <= 2:
            return 202, {"Retry-After": "1", "Location": f"{self.url}/status"}, b"still working"
        return 200, {"Content-Type": "text/plain"}, b"done"


@pytest.fixture
def operation() -> Iterator[Operation]:
    found = Operation()
    yield found
    found.server.close()


@pytest.fixture
def action(operation: Operation) -> Iterator[Server]:
    def answer(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        if hit.path == "/work":
            return 202, {"Location": f"{operation.url}/status", "Retry-After": "1"}, b"accepted"
        return 200, {"Content-Type": "text/plain"}, b"plain"

    server = serve(answer)
    yield server
    server.close()


def occurrence(rt: Runtime, name: str, due: datetime) -> OccurrenceMessage:
    job = job_status(rt, name)
    return OccurrenceMessage(job.key, due, due, Trigger.RUN_NOW, generation=job.generation)


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_polled_attempt_holds_its_slot_until_the_work_ends_and_its_polls_are_paced_by_the_location_host(
    runtime: Runtime, settings: Settings, operation: Operation, action: Server
) -> None:
    limited_collection(
        runtime,
        {"maxConcurrentExecutions": 1, "targetRateLimits": [{"host": "localhost", "requestsPerSecond": POLL_RATE}]},
    )
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()
    request = {"uri": f"{action.url}/work", "method": "POST", "asyncCompletion": {"pollingInterval": "PT1S"}}
    put_job(runtime, "polled", {"startTime": tomorrow, "action": {"type": "Http", "request": request}})
    put_job(
        runtime,
        "plain",
        {
            "startTime": tomorrow,
            "action": {"type": "Http", "request": {"uri": f"{action.url}/plain", "method": "POST"}},
        },
    )
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
    polled = occurrence(runtime, "polled", due)
    with instances(settings, 1) as [instance]:
        instance.run(OccurrenceBatch((polled,)))
        wait_for(lambda: any(hit.path == "/work" for hit in action.hits), "the action's 202")
        # Another job of the collection comes while the work is polled: the one slot is the polled attempt's.
        instance.run(OccurrenceBatch((occurrence(runtime, "plain", datetime.now(UTC)),)))
        wait_for(lambda: any(hit.path == "/plain" for hit in action.hits), "the other job to run")
        gate = runtime.store.gates
        assert gate is not None
        wait_for(lambda: gate.state(polled.job.collection_key).held(datetime.now(UTC)) == (), "every slot given back")
    assert failures([instance]) == []
    polls = [hit.at for hit in operation.server.hits]
    [plain] = [hit.at for hit in action.hits if hit.path == "/plain"]
    assert len(polls) == 3
    assert plain > polls[-1], "the other job waited for the polled work's end, not for its 202"
    # Paced by the Location's host (0.5/s), not sent at the polls' Retry-After of 1 s.
    assert all(b - a >= timedelta(seconds=1.8) for a, b in zip(polls, polls[1:], strict=False)), polls
    entries, _ = runtime.store.history.ledger_page(JobKey(SUB, RG, JC, "plain"), None, None, None, 5)
    assert [(e.status, e.waited_for) for e in entries] == [(JobExecutionStatus.COMPLETED, WaitCause.CONCURRENCY)]
    history, _ = runtime.store.history.page(polled.job, None, 5)
    assert [h.status for h in history] == [JobExecutionStatus.COMPLETED] and "after 3 polls" in history[0].message
