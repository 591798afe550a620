"""What-if on every write, and repeated query parameters, over real HTTP (tests/api/conftest.py's server).

Contract: a write asked as a what-if (`whatIf=true` in any spelling, or the header `x-ms-what-if: true`) is never
carried out. In the newer api-version it is answered as a dry run (job PUT, PATCH and DELETE, collection PUT and
PATCH, backfill: validated as the write, nothing written or queued) or refused, 400 `WhatIfNotSupported` naming
the operation (run now, collection DELETE, enable, disable, role assignments). 2016-03-01 refuses the flag on
every write (400 naming the api-version that has it). Storage is byte-identical afterwards either way, and a
what-if of a run or a backfill sends nothing to the target. A query parameter given twice, in any spelling
(`WhatIf=false&whatIf=true`, `api-version` twice), is a 400 `DuplicateQueryParameter` and nothing is written,
in every api-version, also under the local host (whose bindings join exact repeats as the Functions host does).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import requests

from shared.api.operations import OPERATIONS, Operation
from shared.auth.roles import READER
from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from tests.api.conftest import ApiServer
from tests.api.test_what_if import storage
from tests.support.clock import ManualClock
from tests.support.local_host import local_host
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = PREVIEW_API_VERSION
STABLE = "2016-03-01"
ROLES_API = "2022-04-01"
JOB = "existing"
ASSIGNMENT = "0d2ab2a4-8c1e-4d0e-9a57-2a7a1c3c00{:02d}"  # one stored at each scope before each test

# The dry runs the newer api-version answers, and the members each answer holds.
ANSWERED = {
    "JobCollections_CreateOrUpdate": {"changeType", "jobCollection"},
    "JobCollections_Patch": {"changeType", "jobCollection"},
    "Jobs_CreateOrUpdate": {"changeType", "job", "occurrences"},
    "Jobs_Patch": {"changeType", "job", "occurrences"},
    "Jobs_Delete": {"changeType", "job"},
    "Jobs_Backfill": {"value"},
}
REFUSED = {
    "JobCollections_Delete",
    "JobCollections_Enable",
    "JobCollections_Disable",
    "Jobs_Run",
    "RoleAssignments_Create",
    "RoleAssignments_Delete",
    # A collection's dead letters: a replay calls a target, a purge loses what it removes.
    "DeadLetters_Replay",
    "DeadLetters_ReplayMany",
    "DeadLetters_Delete",
    "DeadLetters_Purge",
}
WRITES = [op for op in OPERATIONS if op.method != "GET"]


def z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _path(op: Operation, assignment: str | None = None) -> str:
    """The operation's route for the fixture's resources; role assignments: the one stored at its scope."""
    names = {
        "subscriptionId": SUB,
        "resourceGroupName": RG,
        "jobCollectionName": JC,
        "jobName": JOB,
        "roleAssignmentName": assignment or ASSIGNMENT.format(op.route.count("/")),
        "deadLetterId": "0000000000000000000-000000000000",
    }
    return re.sub(r"\{(\w+)\}", lambda m: names[m.group(1)], op.route)


def _body(op: Operation, now: datetime, target: str) -> Any:
    if op.name == "JobCollections_CreateOrUpdate":
        return {"location": "West US", "tags": {"team": "ops"}, "properties": {"sku": {"name": "Standard"}}}
    if op.name == "JobCollections_Patch":
        return {"tags": {"team": "ops"}}
    if op.name == "Jobs_CreateOrUpdate":
        return _job(target, now, "Minute")
    if op.name == "Jobs_Patch":
        return {"properties": {"state": "Disabled"}}
    if op.name == "Jobs_Backfill":
        return {"from": z(now - timedelta(hours=3)), "to": z(now - timedelta(minutes=30))}
    if op.name == "RoleAssignments_Create":
        role = f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/{READER.id}"
        return {"properties": {"roleDefinitionId": role, "principalId": str(uuid.uuid4())}}
    return None


def _job(target: str, now: datetime, frequency: str = "Hour") -> dict[str, Any]:
    start = (now - timedelta(days=1)).replace(minute=0, second=0)
    return {
        "properties": {
            "startTime": z(start),
            "action": {"type": "Http", "request": {"uri": f"{target}/fired", "method": "POST"}},
            "recurrence": {"frequency": frequency},
        }
    }


@pytest.fixture
def rt(settings, clock: ManualClock, api_server: ApiServer, http_target) -> Iterator[Runtime]:
    """A collection, an hourly job aimed at the recording target, and a role assignment at every scope, served
    over HTTP; the queue is emptied so that storage holds only what a write would change."""
    runtime = Runtime.create(settings, clock)
    api_server.runtime = runtime
    make_collection(runtime)
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", JOB, _job(http_target.url, clock.now())).status == 201
    for op in OPERATIONS:
        if op.name == "RoleAssignments_Create":
            answer = _send(api_server, op, ROLES_API, body=_body(op, clock.now(), http_target.url))
            assert answer.status_code == 201, answer.text
    runtime.store.queue.client.clear_messages()
    runtime.store.dispatch.client.clear_messages()
    yield runtime
    api_server.runtime = None
    runtime.close()


def _send(
    server: ApiServer,
    op: Operation,
    version: str,
    query: str = "",
    headers: dict[str, str] | None = None,
    body: Any = None,
    assignment: str | None = None,
) -> requests.Response:
    url = f"{server.url}/{_path(op, assignment)}?api-version={version}{query}"
    return requests.request(op.method, url, json=body, headers=headers, timeout=30)


def _id(op: Operation) -> str:
    return f"{op.name}:{op.route.count('/')}"  # role assignments: one name at three scopes


def _version_of(op: Operation, version: str) -> str:
    return ROLES_API if op.name.startswith("RoleAssignments_") else version


@pytest.mark.parametrize("asked", ["query", "header", "spelling"])
@pytest.mark.parametrize("op", WRITES, ids=_id)
def test_every_newer_write_asked_as_what_if_is_answered_or_refused_and_writes_nothing(
    rt: Runtime, api_server: ApiServer, http_target, clock: ManualClock, op: Operation, asked: str
) -> None:
    assert op.name in ANSWERED or op.name in REFUSED, f"{op.name}: a write nobody decided what-if for"
    before = storage(rt)
    query, headers = {"query": ("&whatIf=true", None), "header": ("", {"x-ms-what-if": "true"})}.get(
        asked, ("&WHATIF=True", None)
    )
    body = _body(op, clock.now(), http_target.url)
    fresh = str(uuid.uuid4()) if op.name == "RoleAssignments_Create" else None  # one a real PUT would create
    answer = _send(api_server, op, _version_of(op, NEWER), query, headers, body, fresh)
    if op.name in REFUSED:
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert error["code"] == "WhatIfNotSupported" and op.name in error["message"], error
    else:
        assert answer.status_code == 200, answer.text
        assert set(answer.json()) == ANSWERED[op.name], answer.json()
    assert storage(rt) == before


def test_the_dry_runs_answer_what_the_write_would_do(rt: Runtime, api_server: ApiServer, clock: ManualClock) -> None:
    ops = {op.name: op for op in WRITES}
    now = clock.now()
    backfill = _send(api_server, ops["Jobs_Backfill"], NEWER, "&whatIf=true", body=_body(ops["Jobs_Backfill"], now, ""))
    first = now.replace(minute=0, second=0) - timedelta(hours=2)
    assert [o["occurrenceTime"] for o in backfill.json()["value"]] == [z(first), z(first + timedelta(hours=1))]
    real = _send(api_server, ops["Jobs_Backfill"], NEWER, body=_body(ops["Jobs_Backfill"], now, ""))
    assert real.json() == backfill.json()  # the same occurrences, identities and seconds: what it would queue

    deleted = _send(api_server, ops["Jobs_Delete"], NEWER, "&whatIf=true").json()
    assert deleted["changeType"] == "Delete" and deleted["job"]["name"] == f"{JC}/{JOB}"
    tagged = _send(api_server, ops["JobCollections_Patch"], NEWER, "&whatIf=true", body={"tags": {"a": "b"}}).json()
    assert tagged["changeType"] == "Modify" and tagged["jobCollection"]["tags"] == {"a": "b"}
    created = requests.put(
        f"{api_server.url}/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/new"
        f"?api-version={NEWER}&whatIf=true",
        json=_body(ops["JobCollections_CreateOrUpdate"], now, ""),
        timeout=30,
    ).json()
    assert created["changeType"] == "Create" and created["jobCollection"]["name"] == "new"
    assert call(rt, "JobCollections_Get", "GET", collection="new").status == 404
    missing = requests.delete(
        f"{api_server.url}/{_path(ops['Jobs_Delete']).replace(JOB, 'nope')}?api-version={NEWER}&whatIf=true",
        timeout=30,
    )
    assert missing.status_code == 404  # the delete's own refusal


@pytest.mark.parametrize("op", [op for op in WRITES if not op.name.startswith("RoleAssignments_")], ids=_id)
def test_2016_03_01_refuses_what_if_on_every_write(
    rt: Runtime, api_server: ApiServer, clock: ManualClock, http_target, op: Operation
) -> None:
    before = storage(rt)
    answer = _send(api_server, op, STABLE, "&whatIf=true", body=_body(op, clock.now(), http_target.url))
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "MissingOrInvalidRequiredQueryParameter" and NEWER in error["message"], error
    assert storage(rt) == before


def test_a_what_if_run_or_backfill_sends_nothing_to_the_target(
    rt: Runtime, api_server: ApiServer, clock: ManualClock, http_target
) -> None:
    ops = {op.name: op for op in WRITES}
    assert _send(api_server, ops["Jobs_Run"], NEWER, "&whatIf=true").status_code == 400
    backfill = _send(
        api_server,
        ops["Jobs_Backfill"],
        NEWER,
        headers={"x-ms-what-if": "true"},
        body=_body(ops["Jobs_Backfill"], clock.now(), ""),
    )
    assert backfill.status_code == 200 and len(backfill.json()["value"]) == 2
    drain(rt, 3)  # the executor, fed whatever the queue holds, past the backfill's one-second spacing
    assert http_target.requests == []
    assert _send(api_server, ops["Jobs_Run"], NEWER).status_code == 200  # the same run, asked for real, fires
    drain(rt, 20, until=lambda: len(http_target.requests) == 1)
    assert [hit.path for hit in http_target.requests] == ["/fired"]


@pytest.mark.parametrize(
    ("version", "query"),
    [
        (NEWER, "&WhatIf=false&whatIf=true"),
        (NEWER, "&whatIf=true&whatIf=true"),
        (NEWER, f"&api-version={NEWER}"),
        (NEWER, f"&API-Version={NEWER}"),
        (STABLE, f"&api-version={STABLE}"),
        (STABLE, "&foo=1&FOO=2"),
    ],
)
def test_a_query_parameter_given_twice_is_refused_and_nothing_written(
    rt: Runtime, api_server: ApiServer, http_target, clock: ManualClock, version: str, query: str
) -> None:
    before = storage(rt)
    put = next(op for op in WRITES if op.name == "Jobs_CreateOrUpdate")
    answer = _send(api_server, put, version, query, body=_job(http_target.url, clock.now(), "Minute"))
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "DuplicateQueryParameter" and "more than once" in error["message"], error
    assert storage(rt) == before


def test_a_list_with_a_repeated_paging_parameter_is_refused(rt: Runtime, api_server: ApiServer) -> None:
    url = f"{api_server.url}/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections"
    answer = requests.get(f"{url}?api-version={STABLE}&$top=1&$TOP=1", timeout=30)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "DuplicateQueryParameter"
    assert requests.get(f"{url}?api-version={STABLE}&$top=1", timeout=30).status_code == 200


def test_the_local_host_refuses_exact_repeats_it_joins(azurite) -> None:
    """The host binding joins `whatIf=true&whatIf=true` into one value; the raw URL still shows two."""
    with local_host(azurite) as base:
        collection = f"{base}/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/jc"
        body = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}
        for query in (f"api-version={NEWER}&api-version={NEWER}", f"api-version={NEWER}&whatIf=true&whatIf=true"):
            answer = requests.put(f"{collection}?{query}", json=body, timeout=30)
            assert answer.status_code == 400, answer.text
            assert answer.json()["error"]["code"] == "DuplicateQueryParameter", answer.text
        assert requests.get(f"{collection}?api-version={NEWER}", timeout=30).status_code == 404
        assert requests.put(f"{collection}?api-version={NEWER}&whatIf=true", json=body, timeout=30).status_code == 200
        assert requests.get(f"{collection}?api-version={NEWER}", timeout=30).status_code == 404
