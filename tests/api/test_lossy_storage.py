"""Under lossy storage every route answers 2xx, the request's own 4xx, or 503 with Retry-After: never a 500, and
never a 409 for the caller's own write. Storage sits behind the fault proxy (tests/support/fault_proxy.py):
"drop" loses a share of storage's answers after storage applied the request (a create, a replace under an ETag,
a transaction, each done and unanswered, which the storage client may repeat), "reset" resets a share of the
connections as they open (the pool is cut before each request, so every request opens one), "cut" cuts every
connection after a few KB, inside whichever answer it is carrying (its headers or its body).

The client behaves as an ARM client does: a 503 is asked again (at once here: Retry-After is checked, not waited),
a bounded number of times. A repeat after a 503 may meet what the lost first try did: a create answers 200
instead of 201, a delete finds nothing (404 for a job or collection, 204 for a role assignment); nothing else.
After the spell, every write the client was told succeeded reads back, and the rejected write changed nothing.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from devhost.azurite import Azurite
from shared import api
from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from tests.support.fault_proxy import StorageFaults
from tests.support.scheduler_client import api_call, encoded

SUB, RG = "sub-lossy", "rg-lossy"
OLD = {"api-version": "2016-03-01"}
NEWER = {"api-version": PREVIEW_API_VERSION}
ROLES = {"api-version": "2022-04-01"}
READER_ROLE = "acdd72a7-3385-48ef-bd42-f606fba81ae7"
KEPT_ROLE = "6f1b2f4e-0a51-4c39-9d3e-37a0c0ffee37"  # each test has its own tables, so one name serves both
# Asked this many times while it answers 503: with a fifth of the answers lost, a request of a dozen storage
# calls fails about every other time, so a dozen tries leave one in thousands unanswered (that one is still a
# legal answer: its write counts as maybe done).
ATTEMPTS = 12
# The share of answers lost ("drop"), or of connections reset ("reset"); "cut": bytes each connection carries
# before it is cut, so an answer is cut inside its headers or its body, a write's too (after storage applied it).
SPELLS = {"drop": 0.35, "reset": 0.4, "cut": 4096}

Send = Callable[[], api.ApiResponse]


@pytest.fixture
def faults(azurite: Azurite) -> Iterator[StorageFaults]:
    proxied = StorageFaults(azurite.connection_string, seed=37)
    yield proxied
    proxied.close()


@dataclasses.dataclass
class Spell:
    rt: Runtime
    faults: StorageFaults
    mode: str
    setting: float
    answers: Counter[int] = dataclasses.field(default_factory=Counter)

    def begin(self) -> None:
        if self.mode == "cut":
            self.faults.set_mode("cut", cut_after=int(self.setting))
        else:
            self.faults.set_mode(self.mode, drop_ratio=self.setting)

    def end(self) -> None:
        self.faults.set_mode("pass")

    def ask(self, send: Send, wanted: set[int], after_loss: frozenset[int] = frozenset()) -> api.ApiResponse:
        """`send` until it answers other than 503 (ATTEMPTS at most): each 503 carries Retry-After, and the answer
        is one of `wanted`, or of `after_loss` once a 503 was answered (the repeat meets what the lost try did)."""
        lost = False
        for _ in range(ATTEMPTS):
            if self.mode == "reset":  # every request opens its connections, a share of which are reset
                self.faults.set_mode("reset", drop_ratio=1.0)
                self.faults.set_mode("reset", drop_ratio=self.setting)
            answer = send()
            self.answers[answer.status] += 1
            if answer.status != 503:
                assert answer.status in wanted | (after_loss if lost else set()), (answer.status, answer.body)
                return answer
            assert int(answer.headers["Retry-After"]) > 0, answer.headers
            is_health = isinstance(answer.body, dict) and "status" in answer.body
            assert (
                answer.body == {"status": "Unhealthy", "storage": {"reachable": False}}
                if is_health
                else answer.body["error"]["code"] == "ServiceUnavailable"
            ), answer.body
            lost = True
        return answer


def _call(
    rt: Runtime, operation: str, method: str, collection: str | None = None, job: str | None = None, **kw: Any
) -> Send:
    body, query, suffix = kw.get("body"), kw.get("query", OLD), kw.get("suffix", "")
    in_group = collection is not None or operation == "JobCollections_ListByResourceGroup"
    return lambda: api_call(
        rt,
        operation,
        method,
        subscription=SUB,
        group=RG if in_group else None,
        collection=collection,
        job=job,
        data=encoded(body),
        query=query,
        suffix=suffix,
    )


def _role(rt: Runtime, operation: str, method: str, name: str | None = None, body: Any = None) -> Send:
    route = {"subscriptionId": SUB, "resourceGroupName": RG}
    url = f"http://127.0.0.1/api/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Authorization/roleAssignments"
    if name is not None:
        route["roleAssignmentName"] = name
        url += f"/{name}"
    data = json.dumps(body).encode() if body is not None else b""
    return lambda: api.handle(operation, api.ApiRequest(method, url, route, ROLES, data), rt)


def _health(rt: Runtime) -> Send:
    return lambda: api.handle("Health_Get", api.ApiRequest("GET", "http://127.0.0.1/api/health", {}, {}), rt)


def _job(interval: int, **properties: Any) -> dict[str, Any]:
    start = (datetime.now(UTC) - timedelta(hours=1)).replace(microsecond=0)
    return {
        "properties": {
            "startTime": start.isoformat(),
            "recurrence": {"frequency": "Minute", "interval": interval},
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/lossy", "method": "GET"}},
            **properties,
        }
    }


def _z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclasses.dataclass
class Expected:
    """What a resource may read back as after the spell: every outcome a write left possible (a write still
    answered 503 after ATTEMPTS may or may not have been done)."""

    possible: list[Any]

    def after(self, answer: api.ApiResponse, value: Any) -> None:
        self.possible = [value] if answer.status != 503 else [*self.possible, value]


def _run_every_route(spell: Spell) -> dict[str, Expected]:
    """Every route family once (writes as a sequence that ends in known states); what each resource may read back."""
    rt, ask = spell.rt, spell.ask
    c, d, role_kept, role_gone = "kept", "gone", KEPT_ROLE, str(uuid.uuid4())
    created, replaced, deleted = {201}, frozenset({200}), frozenset({404})
    expected = {
        "collection": Expected([None]),
        "job": Expected([None]),
        "deleted job": Expected([None]),
        "deleted collection": Expected([None]),
        "role": Expected([None]),
    }
    collection = {"location": "westus", "properties": {"sku": {"name": "Standard"}}}

    answer = ask(_call(rt, "JobCollections_CreateOrUpdate", "PUT", c, body=collection), created, replaced)
    expected["collection"].after(answer, 50)
    answer = ask(
        _call(rt, "JobCollections_Patch", "PATCH", c, body={"properties": {"quota": {"maxJobCount": 20}}}), {200}
    )
    expected["collection"].after(answer, 20)
    ask(_call(rt, "JobCollections_Get", "GET", c), {200})
    ask(_call(rt, "JobCollections_ListByResourceGroup", "GET"), {200})
    ask(_call(rt, "JobCollections_ListBySubscription", "GET"), {200})

    answer = ask(_call(rt, "Jobs_CreateOrUpdate", "PUT", c, "a", body=_job(5)), created, replaced)
    expected["job"].after(answer, (5, "Enabled"))
    answer = ask(_call(rt, "Jobs_CreateOrUpdate", "PUT", c, "a", body=_job(7)), {200})
    expected["job"].after(answer, (7, "Enabled"))
    answer = ask(_call(rt, "Jobs_Patch", "PATCH", c, "a", body={"properties": {"state": "Disabled"}}), {200})
    expected["job"].after(answer, (7, "Disabled"))
    answer = ask(_call(rt, "Jobs_Patch", "PATCH", c, "a", body={"properties": {"state": "Enabled"}}), {200})
    expected["job"].after(answer, (7, "Enabled"))
    invalid = _job(7)
    invalid["properties"]["recurrence"]["frequency"] = "Fortnight"
    ask(_call(rt, "Jobs_CreateOrUpdate", "PUT", c, "a", body=invalid), {400})  # rejected: nothing changes
    what_if = _call(rt, "Jobs_CreateOrUpdate", "PUT", c, "a", body=_job(9), query={**NEWER, "whatIf": "true"})
    ask(what_if, {200})  # a dry run: nothing changes either

    ask(_call(rt, "Jobs_Get", "GET", c, "a"), {200})
    ask(_call(rt, "Jobs_Get", "GET", c, "missing"), {404})
    ask(_call(rt, "Jobs_List", "GET", c, suffix="/jobs"), {200})
    ask(_call(rt, "Jobs_Run", "POST", c, "a", suffix="/run"), {200})
    ask(_call(rt, "Jobs_ListJobHistory", "GET", c, "a", suffix="/history"), {200})
    ask(_call(rt, "Jobs_ListJobHistory", "GET", c, "a", query=NEWER, suffix="/history"), {200})  # the ledger
    ask(_call(rt, "Jobs_ListAttempts", "GET", c, "a", query=NEWER, suffix="/attempts"), {200})
    ask(_call(rt, "Jobs_ListOccurrences", "GET", c, "a", query=NEWER, suffix="/occurrences"), {200})
    now = datetime.now(UTC)
    window = {"from": _z(now - timedelta(minutes=30)), "to": _z(now - timedelta(minutes=15))}
    ask(_call(rt, "Jobs_Backfill", "POST", c, "a", body=window, query=NEWER, suffix="/backfill"), {200})

    answer = ask(_call(rt, "Jobs_CreateOrUpdate", "PUT", c, "b", body=_job(11)), created, replaced)
    expected["deleted job"].after(answer, "there")
    answer = ask(_call(rt, "Jobs_Delete", "DELETE", c, "b"), {200}, deleted)
    expected["deleted job"].after(answer, None)

    answer = ask(_call(rt, "JobCollections_CreateOrUpdate", "PUT", d, body=collection), created, replaced)
    expected["deleted collection"].after(answer, "there")
    ask(_call(rt, "JobCollections_Disable", "POST", d, suffix="/disable"), {200})
    ask(_call(rt, "JobCollections_Enable", "POST", d, suffix="/enable"), {200})
    answer = ask(_call(rt, "JobCollections_Delete", "DELETE", d), {200}, deleted)
    expected["deleted collection"].after(answer, None)

    grant = {"properties": {"roleDefinitionId": READER_ROLE, "principalId": str(uuid.uuid4())}}
    answer = ask(_role(rt, "RoleAssignments_Create", "PUT", role_kept, grant), {201})
    expected["role"].after(answer, grant["properties"]["principalId"])
    ask(_role(rt, "RoleAssignments_Get", "GET", role_kept), {200})
    ask(_role(rt, "RoleAssignments_ListForScope", "GET"), {200})
    other = {"properties": {"roleDefinitionId": READER_ROLE, "principalId": str(uuid.uuid4())}}
    ask(_role(rt, "RoleAssignments_Create", "PUT", role_gone, other), {201})
    ask(_role(rt, "RoleAssignments_Delete", "DELETE", role_gone), {200}, frozenset({204}))  # 204: none there

    ask(_health(rt), {200})
    return expected


def _read_back(rt: Runtime, expected: dict[str, Expected]) -> None:
    """With storage well again: what the spell's writes left is one of their possible outcomes."""
    got = _call(rt, "JobCollections_Get", "GET", "kept")()
    quota = got.body["properties"]["quota"]["maxJobCount"] if got.status == 200 else None
    assert quota in expected["collection"].possible, (got.status, got.body)
    got = _call(rt, "Jobs_Get", "GET", "kept", "a")()
    job = (
        (got.body["properties"]["recurrence"]["interval"], got.body["properties"]["state"].capitalize())
        if got.status == 200
        else None
    )
    assert job in expected["job"].possible, (got.status, got.body)
    got = _call(rt, "Jobs_Get", "GET", "kept", "b")()
    assert {200: "there", 404: None}[got.status] in expected["deleted job"].possible, got.body
    got = _call(rt, "JobCollections_Get", "GET", "gone")()
    assert {200: "there", 404: None}[got.status] in expected["deleted collection"].possible, got.body
    got = _role(rt, "RoleAssignments_Get", "GET", KEPT_ROLE)()
    assert (got.body["properties"]["principalId"] if got.status == 200 else None) in expected["role"].possible


@pytest.mark.parametrize("mode", sorted(SPELLS))
def test_every_route_answers_its_own_status_or_503_with_retry_after_under_lossy_storage(
    settings: Settings, faults: StorageFaults, mode: str
) -> None:
    rt = Runtime.create(
        dataclasses.replace(settings, storage=StorageSettings(connection_string=faults.connection_string))
    )
    spell = Spell(rt, faults, mode, SPELLS[mode])
    spell.begin()
    try:
        expected = _run_every_route(spell)
    finally:
        spell.end()
    assert (faults.resets if mode == "reset" else faults.dropped) > 0  # the spell did lose answers / connections
    _read_back(rt, expected)
