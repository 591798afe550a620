"""Dead letters end to end: the real API, the queue (Azurite), the executor and a local HTTP target. An occurrence
whose run ends failed for good is dead-lettered in its final attempt's write; listed and shown through the API;
replayed once with its original identity (the ledger then says Completed); a second replay while one is in flight
is refused; purged. An error action that succeeded handled the failure; one that failed dead-letters it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared import api
from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from tests.conftest import HttpTarget
from tests.executor.peers.servers import Hit, Server, serve
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
BASE = f"/api/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}/deadLetters"


def letters_call(
    rt: Runtime, operation: str, method: str, dead_letter: str | None = None, suffix: str = "", body: Any = None
) -> api.ApiResponse:
    route = {"subscriptionId": SUB, "resourceGroupName": RG, "jobCollectionName": JC}
    path = BASE
    if dead_letter is not None:
        route["deadLetterId"] = dead_letter
        path += f"/{dead_letter}"
    data = json.dumps(body).encode() if body is not None else b""
    request = api.ApiRequest(method, f"http://127.0.0.1:7071{path}{suffix}", route, dict(NEWER), data)
    return api.handle(operation, request, rt)


def listed(rt: Runtime) -> list[dict[str, Any]]:
    response = letters_call(rt, "DeadLetters_List", "GET")
    assert response.status == 200, response.body
    value: list[dict[str, Any]] = response.body["value"]
    return value


def put_one_shot(rt: Runtime, name: str, action: dict[str, Any]) -> None:
    start = (datetime.now(UTC) + timedelta(seconds=2)).replace(microsecond=0)
    properties = {"startTime": start.isoformat(), "action": action}
    created = call(rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": properties}, query=NEWER)
    assert created.status == 201, created.body


def http(url: str) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": url, "method": "POST"}, "retryPolicy": {"retryType": "None"}}


def test_a_failed_occurrence_is_dead_lettered_listed_shown_replayed_once_with_its_identity_and_purged(
    runtime: Runtime, http_target: HttpTarget
) -> None:
    rt = runtime
    make_collection(rt)
    http_target.status = 500
    put_one_shot(rt, "flaky", http(f"{http_target.url}/hook"))
    drain(rt, 20, until=lambda: bool(listed(rt)))
    [letter] = listed(rt)
    first = http_target.requests[0]
    props = letter["properties"]
    assert props["jobName"] == "flaky" and props["state"] == "DeadLettered" and props["status"] == "Failed"
    assert props["executionTag"] == first.headers["x-ms-execution-tag"] == first.headers["idempotency-key"]
    assert props["trigger"] == "Schedule" and props["replayCount"] == 0 and "Internal Server Error" in props["message"]
    dead_letter = letter["name"].split("/", 1)[1]

    shown = letters_call(rt, "DeadLetters_Get", "GET", dead_letter)
    assert shown.status == 200, shown.body
    [attempt] = shown.body["properties"]["attempts"]
    assert (
        attempt["properties"]["status"] == "Failed" and attempt["properties"]["executionTag"] == props["executionTag"]
    )
    assert letters_call(rt, "DeadLetters_Get", "GET", "0" * 20 + "-" + "0" * 12).status == 404

    http_target.status = 200
    replayed = letters_call(rt, "DeadLetters_Replay", "POST", dead_letter, "/replay")
    assert replayed.status == 200, replayed.body
    assert replayed.body["properties"]["state"] == "Replaying" and replayed.body["properties"]["replayCount"] == 1
    again = letters_call(rt, "DeadLetters_Replay", "POST", dead_letter, "/replay")
    assert again.status == 409 and again.body["error"]["code"] == "Conflict"

    drain(rt, 20, until=lambda: listed(rt)[0]["properties"]["state"] == "Resolved")
    drain(rt, 2)  # longer than a queue poll and a record window: a second delivery of the replay would show
    hits = http_target.requests
    assert len(hits) == 2
    for header in ("idempotency-key", "x-ms-execution-tag"):
        assert hits[1].headers[header] == first.headers[header]
    [resolved] = listed(rt)
    assert resolved["properties"]["status"] == "Completed" and resolved["properties"]["replayCount"] == 1
    ledger = call(rt, "Jobs_ListJobHistory", "GET", "flaky", query=NEWER).body["value"]
    assert [entry["properties"]["status"] for entry in ledger] == ["Completed"]
    assert ledger[0]["properties"]["executionTag"] == props["executionTag"]

    assert letters_call(rt, "DeadLetters_Delete", "DELETE", dead_letter).status == 200
    assert listed(rt) == []
    assert letters_call(rt, "DeadLetters_Delete", "DELETE", dead_letter).status == 404


def test_the_2016_api_version_has_no_dead_letters(runtime: Runtime) -> None:
    make_collection(runtime)
    route = {"subscriptionId": SUB, "resourceGroupName": RG, "jobCollectionName": JC}
    old = api.ApiRequest("GET", f"http://127.0.0.1:7071{BASE}", route, {"api-version": "2016-03-01"}, b"")
    assert api.handle("DeadLetters_List", old, runtime).status == 400


@pytest.fixture
def by_path() -> Iterator[tuple[Server, dict[str, int]]]:
    """A target answering each path with the status the test sets (200 when unset)."""
    statuses: dict[str, int] = {}

    def answer(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        return statuses.get(hit.path, 200), {"Content-Type": "text/plain"}, b"answer"

    server = serve(answer)
    yield server, statuses
    server.close()


def test_an_error_action_that_succeeded_handles_the_failure_and_one_that_failed_dead_letters_it(
    runtime: Runtime, by_path: tuple[Server, dict[str, int]]
) -> None:
    rt = runtime
    server, statuses = by_path
    statuses.update({"/main": 500, "/broken-error": 500})
    make_collection(rt)
    put_one_shot(rt, "handled", {**http(f"{server.url}/main"), "errorAction": http(f"{server.url}/error")})
    put_one_shot(rt, "unhandled", {**http(f"{server.url}/main"), "errorAction": http(f"{server.url}/broken-error")})

    def error_actions_ran() -> bool:
        return {hit.path for hit in server.hits} >= {"/error", "/broken-error"}

    drain(rt, 20, until=lambda: error_actions_ran() and bool(listed(rt)))
    drain(rt, 1.5)  # past a record window: the handled one's write would have landed too
    [letter] = listed(rt)
    assert letter["properties"]["jobName"] == "unhandled"
    assert letter["properties"]["actionName"] == "ErrorAction" and letter["properties"]["status"] == "Failed"
