"""A role assignment's `roleDefinitionId` names a role exactly (issue 36): the bare GUID, or the role definition's
resource id alone or under the assignment's own subscription. Any other text ending in a role's GUID (a relative
path, another subscription, whitespace, a member named twice in two cases) is refused with ARM's error, and nothing
is stored."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shared import api
from shared.auth.roles import OWNER, READER, role_of
from shared.runtime import Runtime
from tests.auth.conftest import OWNER_ROLE, READER_ROLE, ROLES_API, SUB, group_scope
from tests.support.identity import new_id

ASSIGNMENTS = "providers/Microsoft.Authorization/roleAssignments"
DEFINITIONS = "providers/Microsoft.Authorization/roleDefinitions"


def _put(runtime: Runtime, name: str, body: Any) -> api.ApiResponse:
    route = {"subscriptionId": SUB, "resourceGroupName": "rg-ids", "roleAssignmentName": name}
    url = f"http://127.0.0.1{group_scope('rg-ids')}/{ASSIGNMENTS}/{name}"
    return api.handle(
        "RoleAssignments_Create", api.ApiRequest("PUT", url, route, ROLES_API, json.dumps(body).encode()), runtime
    )


def _get(runtime: Runtime, name: str) -> api.ApiResponse:
    route = {"subscriptionId": SUB, "resourceGroupName": "rg-ids", "roleAssignmentName": name}
    url = f"http://127.0.0.1{group_scope('rg-ids')}/{ASSIGNMENTS}/{name}"
    return api.handle("RoleAssignments_Get", api.ApiRequest("GET", url, route, ROLES_API), runtime)


@pytest.mark.parametrize(
    "definition",
    [
        f"../../../roleDefinitions/{OWNER_ROLE}",
        f"/subscriptions/{SUB}/{DEFINITIONS}/../../../{DEFINITIONS}/{OWNER_ROLE}",
        f"/subscriptions/other-subscription/{DEFINITIONS}/{OWNER_ROLE}",
        f"/subscriptions/{SUB}/resourceGroups/rg-ids/{DEFINITIONS}/{OWNER_ROLE}",
        f"/anything/{OWNER_ROLE}",
        f"{OWNER_ROLE} ",
        f"{OWNER_ROLE}/",
        f"{OWNER_ROLE}\u0000",
        f"/{DEFINITIONS}/{OWNER_ROLE}x",
    ],
)
def test_a_definition_id_that_only_ends_in_a_roles_guid_names_no_role_and_stores_nothing(
    runtime: Runtime, definition: str
) -> None:
    name = new_id()
    answer = _put(runtime, name, {"properties": {"roleDefinitionId": definition, "principalId": new_id()}})
    assert answer.status == 400, answer.body
    assert answer.body["error"]["code"] == "RoleDefinitionDoesNotExist"
    assert _get(runtime, name).status == 404


def test_a_member_named_twice_in_two_cases_is_refused(runtime: Runtime) -> None:
    name = new_id()
    twice = {
        "properties": {
            "roleDefinitionId": READER_ROLE,
            "RoleDefinitionId": OWNER_ROLE,
            "principalId": new_id(),
        }
    }
    answer = _put(runtime, name, twice)
    assert answer.status == 400 and answer.body["error"]["code"] == "BadRequest", answer.body
    assert "given twice" in answer.body["error"]["message"]
    assert _get(runtime, name).status == 404


@pytest.mark.parametrize(
    "definition",
    [
        READER_ROLE,
        READER_ROLE.upper(),
        f"/{DEFINITIONS}/{READER_ROLE}",
        f"/subscriptions/{SUB}/{DEFINITIONS}/{READER_ROLE}",
        f"/SUBSCRIPTIONS/{SUB.upper()}/providers/microsoft.authorization/roledefinitions/{READER_ROLE}",
    ],
)
def test_the_forms_that_name_a_role_exactly_are_stored_as_that_role(runtime: Runtime, definition: str) -> None:
    name = new_id()
    answer = _put(runtime, name, {"properties": {"roleDefinitionId": definition, "principalId": new_id()}})
    assert answer.status == 201, answer.body
    assert answer.body["properties"]["roleDefinitionId"] == f"/subscriptions/{SUB}/{DEFINITIONS}/{READER_ROLE}"
    assert _get(runtime, name).body == answer.body


def test_role_of_names_a_role_only_by_its_exact_id() -> None:
    assert role_of(OWNER_ROLE) is OWNER
    assert role_of(f"/subscriptions/s/{DEFINITIONS}/{READER_ROLE}") is READER
    assert role_of(f"/subscriptions/s/{DEFINITIONS}/{READER_ROLE}", "other") is None
    assert role_of(f"../../../roleDefinitions/{OWNER_ROLE}") is None
    assert role_of(f"/subscriptions/../{DEFINITIONS}/{OWNER_ROLE}") is None
