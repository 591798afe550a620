"""The role assignment API over plain HTTP (shaped like ARM's Microsoft.Authorization/roleAssignments), against
the real function_app.py in `entra` mode; and the same API in `none` mode, in process."""

from __future__ import annotations

import json

from shared import api
from shared.runtime import Runtime
from tests.auth.conftest import (
    CONTRIBUTOR_ROLE,
    OWNER,
    READER_ROLE,
    ROLES_API,
    SUB,
    Scheduler,
    collection_scope,
    group_scope,
)
from tests.support.identity import new_id

ASSIGNMENTS = "providers/Microsoft.Authorization/roleAssignments"


def _body(role: str, principal: str, kind: str | None = None) -> dict:
    properties = {
        "roleDefinitionId": f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/{role}",
        "principalId": principal,
    }
    if kind:
        properties["principalType"] = kind
    return {"properties": properties}


def test_put_get_list_delete(scheduler: Scheduler) -> None:
    scope, name, principal = group_scope("rg-ra"), new_id(), new_id()
    path = f"{scope}/{ASSIGNMENTS}/{name}"
    created = scheduler.as_(OWNER, "PUT", path, _body(READER_ROLE, principal, "group"), ROLES_API)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["id"] == path and body["name"] == name and body["type"] == "Microsoft.Authorization/roleAssignments"
    properties = body["properties"]
    assert properties["roleDefinitionId"].endswith(f"/providers/Microsoft.Authorization/roleDefinitions/{READER_ROLE}")
    assert (properties["principalId"], properties["principalType"], properties["scope"]) == (principal, "Group", scope)
    assert properties["createdBy"] == OWNER and properties["createdOn"].endswith("Z")

    assert scheduler.as_(OWNER, "GET", path, params=ROLES_API).json() == body
    again = scheduler.as_(OWNER, "PUT", path, _body(READER_ROLE, principal, "Group"), ROLES_API)
    assert again.status_code == 201 and again.json() == body  # an identical PUT is idempotent

    listed = scheduler.as_(OWNER, "GET", f"{scope}/{ASSIGNMENTS}", params=ROLES_API).json()["value"]
    assert body in listed
    by_sub = scheduler.as_(OWNER, "GET", f"/subscriptions/{SUB}/{ASSIGNMENTS}", params=ROLES_API).json()["value"]
    assert body in by_sub  # below the listed scope
    below = scheduler.as_(OWNER, "GET", f"{collection_scope('rg-ra', 'jc')}/{ASSIGNMENTS}", params=ROLES_API)
    assert body in below.json()["value"]  # above the listed scope: inherited
    at_sub = scheduler.as_(
        OWNER, "GET", f"/subscriptions/{SUB}/{ASSIGNMENTS}", params={**ROLES_API, "$filter": "atScope()"}
    ).json()["value"]
    assert body not in at_sub
    mine = scheduler.as_(
        OWNER,
        "GET",
        f"/subscriptions/{SUB}/{ASSIGNMENTS}",
        params={**ROLES_API, "$filter": f"principalId eq '{principal}'"},
    ).json()["value"]
    assert mine == [body]

    deleted = scheduler.as_(OWNER, "DELETE", path, params=ROLES_API)
    assert deleted.status_code == 200 and deleted.json() == body
    assert scheduler.as_(OWNER, "DELETE", path, params=ROLES_API).status_code == 204
    missing = scheduler.as_(OWNER, "GET", path, params=ROLES_API)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "RoleAssignmentNotFound"


def test_an_assignment_is_only_at_its_own_scope(scheduler: Scheduler) -> None:
    name = new_id()
    scheduler.as_(
        OWNER, "PUT", f"{group_scope('rg-own')}/{ASSIGNMENTS}/{name}", _body(READER_ROLE, new_id()), ROLES_API
    )
    assert (
        scheduler.as_(OWNER, "GET", f"{group_scope('rg-not')}/{ASSIGNMENTS}/{name}", params=ROLES_API).status_code
        == 404
    )


def test_bad_assignments_are_refused_and_change_nothing(scheduler: Scheduler) -> None:
    scope, principal = group_scope("rg-bad"), new_id()
    cases = [
        ("not-a-guid", _body(READER_ROLE, principal), 400, "InvalidRoleAssignmentId"),
        (new_id(), _body("00000000-0000-0000-0000-000000000000", principal), 400, "RoleDefinitionDoesNotExist"),
        (new_id(), _body(READER_ROLE, "someone"), 400, "InvalidPrincipalId"),
        (new_id(), _body(READER_ROLE, principal, "Robot"), 400, "BadRequest"),
        (new_id(), {"properties": "x"}, 400, "BadRequest"),
    ]
    for name, body, status, code in cases:
        response = scheduler.as_(OWNER, "PUT", f"{scope}/{ASSIGNMENTS}/{name}", body, ROLES_API)
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), response.text
    assert (
        scheduler.as_(OWNER, "GET", f"{scope}/{ASSIGNMENTS}", params={**ROLES_API, "$filter": "atScope()"}).json()[
            "value"
        ]
        == []
    )
    no_version = scheduler.as_(OWNER, "GET", f"{scope}/{ASSIGNMENTS}", params={})
    assert no_version.status_code == 400


def test_assignments_never_change_and_never_repeat(scheduler: Scheduler) -> None:
    scope, name, principal = group_scope("rg-immutable"), new_id(), new_id()
    path = f"{scope}/{ASSIGNMENTS}/{name}"
    assert scheduler.as_(OWNER, "PUT", path, _body(READER_ROLE, principal), ROLES_API).status_code == 201
    changed = scheduler.as_(OWNER, "PUT", path, _body(CONTRIBUTOR_ROLE, principal), ROLES_API)
    assert changed.status_code == 409 and changed.json()["error"]["code"] == "RoleAssignmentUpdateNotPermitted"
    elsewhere = scheduler.as_(
        OWNER, "PUT", f"{group_scope('rg-other')}/{ASSIGNMENTS}/{name}", _body(READER_ROLE, principal), ROLES_API
    )
    assert elsewhere.status_code == 409
    twice = scheduler.as_(OWNER, "PUT", f"{scope}/{ASSIGNMENTS}/{new_id()}", _body(READER_ROLE, principal), ROLES_API)
    assert twice.status_code == 409 and twice.json()["error"]["code"] == "RoleAssignmentExists"
    assert (
        scheduler.as_(OWNER, "GET", path, params=ROLES_API)
        .json()["properties"]["roleDefinitionId"]
        .endswith(READER_ROLE)
    )


def test_only_owners_change_assignments_and_readers_may_see_them(scheduler: Scheduler) -> None:
    scope = group_scope("rg-who")
    reader, contributor = new_id(), new_id()
    scheduler.assign(reader, READER_ROLE, scope)
    scheduler.assign(contributor, CONTRIBUTOR_ROLE, scope)
    listed = scheduler.as_(reader, "GET", f"{scope}/{ASSIGNMENTS}", params=ROLES_API)
    assert listed.status_code == 200 and len(listed.json()["value"]) == 2
    name = new_id()
    for caller in (reader, contributor):
        refused = scheduler.as_(caller, "PUT", f"{scope}/{ASSIGNMENTS}/{name}", _body(OWNER_ROLE_ID, caller), ROLES_API)
        assert refused.status_code == 403
        error = refused.json()["error"]
        assert error["code"] == "AuthorizationFailed"
        assert "perform action 'Microsoft.Authorization/roleAssignments/write' over scope" in error["message"]
    existing = scheduler.as_(reader, "GET", f"{scope}/{ASSIGNMENTS}", params=ROLES_API).json()["value"][0]["name"]
    assert (
        scheduler.as_(contributor, "DELETE", f"{scope}/{ASSIGNMENTS}/{existing}", params=ROLES_API).status_code == 403
    )
    assert scheduler.as_(new_id(), "GET", f"{scope}/{ASSIGNMENTS}", params=ROLES_API).status_code == 403
    unauthenticated = scheduler.http("GET", f"{scope}/{ASSIGNMENTS}", params=ROLES_API)
    assert unauthenticated.status_code == 401


OWNER_ROLE_ID = "8e3af657-a8ff-443c-a75c-2fe8c4bcb635"


def test_without_authentication_the_api_still_manages_assignments(runtime: Runtime) -> None:
    """`none` mode (local): every caller may manage them; nobody is recorded as their creator."""
    name = new_id()
    route = {"subscriptionId": SUB, "resourceGroupName": "rg-local", "roleAssignmentName": name}
    url = f"http://127.0.0.1{group_scope('rg-local')}/{ASSIGNMENTS}/{name}"
    put = api.handle(
        "RoleAssignments_Create",
        api.ApiRequest("PUT", url, route, ROLES_API, json.dumps(_body(READER_ROLE, new_id())).encode()),
        runtime,
    )
    assert put.status == 201 and put.body["properties"]["createdBy"] is None
    got = api.handle("RoleAssignments_Get", api.ApiRequest("GET", url, route, ROLES_API), runtime)
    assert got.status == 200 and got.body == put.body


def test_a_list_cap_or_offset_it_would_not_apply_is_refused(scheduler: Scheduler) -> None:
    """The list pages by nextLink only: a `$top` or `$skip` would be ignored (a client asking for 5 would get 100
    and no nextLink), so each is a 400 naming it."""
    for name, value in (("$top", "5"), ("$skip", "1"), ("$TOP", "5")):
        answer = scheduler.as_(OWNER, "GET", f"/subscriptions/{SUB}/{ASSIGNMENTS}", params={**ROLES_API, name: value})
        assert answer.status_code == 400, (name, answer.text)
        assert name.lower() in answer.json()["error"]["message"].lower()
