"""GET /api/health lists the jobs past their expectation of success ("a success at least every D") as the last
tick found them, without changing its status; the ids only where the API is open to anyone.

In one process with a hand-moved clock (the API, the executor against a real local HTTP target, the dispatcher's
tick and the health route all read it), on the memory store: no real minutes are waited."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared import api
from shared.keys import JobKey
from shared.model import format_utc
from shared.model.versions import PREVIEW
from shared.runtime import Runtime
from shared.settings import AuthSettings, Settings
from shared.store.memory import MemoryStorage
from tests.executor.peers.servers import Hit, Server, serve
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

FAILING, SUCCEEDING = "failing", "succeeding"


@pytest.fixture
def target() -> Iterator[Server]:
    """Answers 500 under /fail, 200 elsewhere."""

    def answer(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        return (500 if hit.path.startswith("/fail") else 200), {"Content-Type": "text/plain"}, b""

    server = serve(answer)
    yield server
    server.close()


def _job(rt: Runtime, name: str, uri: str) -> None:
    body = {
        "properties": {
            "startTime": (rt.clock.now() + timedelta(days=1)).isoformat(),  # runs only when asked
            "action": {
                "type": "Http",
                "request": {"uri": uri, "method": "POST", "body": "x"},
                "retryPolicy": {"retryType": "None"},
            },
            "expectSuccessWithin": "PT2M",
        }
    }
    answer = call(rt, "Jobs_CreateOrUpdate", "PUT", name, body, query={"api-version": PREVIEW})
    assert answer.status == 201, answer.body


def _run_both_then_tick(rt: Runtime, target: Server) -> None:
    """Each job runs now (the failing one fails again, the other succeeds), then the dispatcher ticks."""
    before = len(target.hits)
    for name in (FAILING, SUCCEEDING):
        assert call(rt, "Jobs_Run", "POST", name).status == 200
    drain(rt, 30, until=lambda: len(target.hits) >= before + 2)
    assert len(target.hits) == before + 2
    rt.dispatcher.tick()


def _health(rt: Runtime) -> api.ApiResponse:
    return api.handle("Health_Get", api.ApiRequest("GET", "http://127.0.0.1/api/health", {}, {}), rt)


def _listed(rt: Runtime) -> dict[str, Any]:
    answer = _health(rt)
    assert (answer.status, answer.body["status"], answer.body["problems"]) == (200, "Healthy", []), answer.body
    return answer.body["silentJobs"]


def test_a_failing_job_is_listed_once_its_expectation_passes_and_a_succeeding_one_never(
    settings: Settings, target: Server, memory_storage: MemoryStorage
) -> None:
    clock = ManualClock(datetime.now(UTC).replace(microsecond=0))
    created = clock.now()
    rt = Runtime.create(settings, clock, storage=memory_storage)
    assert _health(rt).body["silentJobs"] == {"count": 0, "checkedAt": None, "jobs": []}  # no tick yet
    make_collection(rt)
    _job(rt, FAILING, f"{target.url}/fail")
    _job(rt, SUCCEEDING, f"{target.url}/ok")

    _run_both_then_tick(rt, target)
    assert _listed(rt) == {"count": 0, "checkedAt": format_utc(created), "jobs": []}

    clock.advance(timedelta(minutes=1, seconds=50))  # 110 s without a success: 2 minutes not yet passed
    _run_both_then_tick(rt, target)
    assert _listed(rt) == {"count": 0, "checkedAt": format_utc(clock.now()), "jobs": []}

    clock.advance(timedelta(seconds=40))  # 150 s
    _run_both_then_tick(rt, target)
    failing = rt.store.jobs.get(JobKey(SUB, RG, JC, FAILING))
    assert failing is not None and failing.last_success_time is None  # it ran three times, and failed each
    clock.advance(timedelta(seconds=10))  # the answer counts the silence up to the health call
    assert _listed(rt) == {
        "count": 1,
        "checkedAt": format_utc(clock.now() - timedelta(seconds=10)),
        "jobs": [
            {
                "id": failing.key.resource_id,
                "expectSuccessWithin": "PT2M",
                "lastSuccess": None,
                "silentSince": format_utc(created),
                "silentSeconds": 160.0,
                "state": "Enabled",
            }
        ],
    }

    # Where the API is closed, this anonymous answer counts the silent jobs but names none.
    closed = Runtime.create(replace(settings, auth=AuthSettings(mode="key")), clock, storage=memory_storage)
    answer = _health(closed)
    assert answer.body["silentJobs"] == {"count": 1, "checkedAt": format_utc(clock.now() - timedelta(seconds=10))}
    assert FAILING not in str(answer.body) and SUB not in str(answer.body)
