"""What-if (newer api-version): `PUT/PATCH ...?whatIf=true` or the `x-ms-what-if: true` header validates as the
write would, answers the job as it would be stored with its next occurrences, and writes nothing: storage is
byte-identical afterwards (every table's entities with their ETags, and the queues), over random bodies."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import api
from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from tests.api.test_fuzz import _schema, from_schema, mutated_job
from tests.jobstate.test_preview import jobs
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection, settle

NEWER = {"api-version": PREVIEW_API_VERSION}
WHAT_IF = {**NEWER, "whatIf": "true"}
ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


def storage(rt: Runtime) -> Any:
    """Everything stored: each table's entities with their ETags, and each queue's messages."""
    tables = sorted(
        (
            t.name,
            sorted(
                json.dumps({**dict(e), "etag": e.metadata["etag"]}, sort_keys=True, default=str)
                for e in t._client.list_entities()
            ),
        )
        for t in rt.store.tables
    )
    queues = [
        sorted(m.content for m in client.peek_messages(max_messages=32))
        + [client.get_queue_properties().approximate_message_count]
        for client in (rt.store.queue.client, rt.store.dispatch.client)
    ]
    return tables, queues


@pytest.fixture
def rt(settings, clock: ManualClock) -> Iterator[Runtime]:
    runtime = Runtime.create(settings, clock)
    make_collection(runtime)
    start = clock.now() + timedelta(seconds=40)  # inside the horizon: a real PUT would queue it at once
    assert (
        call(
            runtime,
            "Jobs_CreateOrUpdate",
            "PUT",
            "existing",
            {"properties": {"startTime": start.isoformat(), "action": ACTION, "recurrence": {"frequency": "Minute"}}},
        ).status
        == 201
    )
    # Its first occurrence goes out through a dispatch task that turns visible `first_gather` after the PUT
    # (shared/first_dispatch.py): run it here, or it turns visible between a test's two looks at storage.
    deadline = time.monotonic() + runtime.settings.timings.first_gather.total_seconds() + 10
    while not list(runtime.store.dispatch.client.peek_messages()):
        assert time.monotonic() < deadline, "the first occurrence's dispatch task never turned visible"
        time.sleep(0.05)
    assert settle(runtime) == 1
    yield runtime
    runtime.close()


def test_what_if_answers_the_job_and_its_occurrences_and_writes_nothing(rt: Runtime, clock: ManualClock) -> None:
    before = storage(rt)
    start = (clock.now() + timedelta(seconds=30)).replace(microsecond=0)
    body = {
        "properties": {
            "startTime": start.isoformat(),
            "action": ACTION,
            "recurrence": {"frequency": "Hour", "count": 3},
            "missedRunPolicy": {"type": "All", "maxRuns": 2},
        }
    }
    answer = call(rt, "Jobs_CreateOrUpdate", "PUT", "fresh", body, query={**WHAT_IF, "count": "5"})
    assert answer.status == 200, answer.body
    assert answer.body["changeType"] == "Create"
    job = answer.body["job"]
    assert job["name"] == f"{JC}/fresh" and job["properties"]["missedRunPolicy"] == {"type": "All", "maxRuns": 2}
    assert job["properties"]["status"]["nextExecutionTime"] == start.strftime("%Y-%m-%dT%H:%M:%SZ")
    occurrences = answer.body["occurrences"]["value"]
    assert [o["occurrenceTime"] for o in occurrences] == [
        (start + timedelta(hours=n)).strftime("%Y-%m-%dT%H:%M:%SZ") for n in range(3)
    ]
    assert [n["code"] for n in occurrences[-1]["notes"]] == ["EndByCount"]
    assert storage(rt) == before
    assert call(rt, "Jobs_Get", "GET", "fresh", query=NEWER).status == 404

    header = api.handle(
        "Jobs_Patch",
        api.ApiRequest(
            "PATCH",
            "http://127.0.0.1/api/x",
            {"subscriptionId": SUB, "resourceGroupName": RG, "jobCollectionName": JC, "jobName": "existing"},
            NEWER,
            json.dumps({"properties": {"state": "Disabled"}}).encode(),
            {"X-MS-What-If": "TRUE"},
        ),
        rt,
    )
    assert header.status == 200 and header.body["changeType"] == "Modify"
    assert header.body["job"]["properties"]["state"] == "disabled" and "status" not in header.body["job"]["properties"]
    assert [n["code"] for n in header.body["occurrences"]["notes"]] == ["JobDisabled"]
    assert storage(rt) == before


def test_a_refused_what_if_is_the_writes_own_error(rt: Runtime) -> None:
    refused = call(
        rt,
        "Jobs_CreateOrUpdate",
        "PUT",
        "bad",
        {"properties": {"action": ACTION, "recurrence": {"frequency": "Minute", "schedule": {"hours": [25]}}}},
        query=WHAT_IF,
    )
    real = call(
        rt,
        "Jobs_CreateOrUpdate",
        "PUT",
        "bad",
        {"properties": {"action": ACTION, "recurrence": {"frequency": "Minute", "schedule": {"hours": [25]}}}},
        query=NEWER,
    )
    assert refused.status == real.status == 400 and refused.body == real.body


def test_what_if_needs_the_newer_api_version_and_a_boolean(rt: Runtime) -> None:
    body = {"properties": {"action": ACTION}}
    before = storage(rt)
    old = call(rt, "Jobs_CreateOrUpdate", "PUT", "x", body, query={"api-version": "2016-03-01", "whatIf": "true"})
    assert old.status == 400 and PREVIEW_API_VERSION in old.body["error"]["message"]
    odd = call(rt, "Jobs_CreateOrUpdate", "PUT", "x", body, query={**NEWER, "whatIf": "maybe"})
    assert odd.status == 400
    assert storage(rt) == before


def test_count_and_from_without_what_if_are_refused_and_nothing_is_written(rt: Runtime) -> None:
    """They shape a what-if's occurrences only: a write carried out would ignore them, so it is refused."""
    body = {"properties": {"action": ACTION, "recurrence": {"frequency": "Hour"}}}
    before = storage(rt)
    for method, name in (("PUT", "x"), ("PATCH", "existing")):
        for query in ({"count": "5"}, {"from": "2026-03-02T00:00:00Z"}, {"whatIf": "false", "count": "5"}):
            answer = call(
                rt,
                "Jobs_CreateOrUpdate" if method == "PUT" else "Jobs_Patch",
                method,
                name,
                body,
                query={**NEWER, **query},
            )
            assert answer.status == 400, (method, query, answer.body)
            assert answer.body["error"]["message"].startswith(next(iter(set(query) - {"whatIf"})))
    assert storage(rt) == before
    kept = call(rt, "Jobs_CreateOrUpdate", "PUT", "x", body, query={"api-version": "2016-03-01", "count": "5"})
    assert kept.status == 201  # the old service never knew them and ignored unknown query parameters


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
@given(
    body=st.one_of(jobs().map(lambda p: {"properties": p}), from_schema(_schema("JobDefinition")), mutated_job()),
    name=st.sampled_from(["existing", "another"]),
    method=st.sampled_from(["PUT", "PATCH"]),
)
def test_what_if_leaves_storage_byte_identical(rt: Runtime, body: dict[str, Any], name: str, method: str) -> None:
    before = storage(rt)
    operation = "Jobs_CreateOrUpdate" if method == "PUT" else "Jobs_Patch"
    answer = call(rt, operation, method, name, raw=json.dumps(body).encode(), query=WHAT_IF)
    assert answer.status < 500, answer.body
    assert storage(rt) == before
