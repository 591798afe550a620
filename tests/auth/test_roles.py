"""The built-in roles allow exactly the actions Azure's do, and scopes nest as ARM's do."""

from __future__ import annotations

import pytest

from shared.auth.roles import CONTRIBUTOR, OWNER, READER, role_of
from shared.auth.scopes import covers

ACTIONS = [
    "Microsoft.Scheduler/jobCollections/read",
    "Microsoft.Scheduler/jobCollections/write",
    "Microsoft.Scheduler/jobCollections/delete",
    "Microsoft.Scheduler/jobCollections/enable/action",
    "Microsoft.Scheduler/jobCollections/jobs/read",
    "Microsoft.Scheduler/jobCollections/jobs/write",
    "Microsoft.Scheduler/jobCollections/jobs/delete",
    "Microsoft.Scheduler/jobCollections/jobs/run/action",
    "Microsoft.Authorization/roleAssignments/read",
    "Microsoft.Authorization/roleAssignments/write",
    "Microsoft.Authorization/roleAssignments/delete",
]


@pytest.mark.parametrize("action", ACTIONS)
def test_each_role_allows_what_azure_allows(action: str) -> None:
    assert OWNER.allows(action)
    assert READER.allows(action) == action.endswith("/read")
    assert CONTRIBUTOR.allows(action) == (not action.startswith("Microsoft.Authorization/") or action.endswith("/read"))
    assert OWNER.allows(action.upper()) and READER.allows(action.lower()) == action.endswith("/read")


def test_roles_are_found_by_id_in_any_form() -> None:
    assert role_of("ACDD72A7-3385-48EF-BD42-F606FBA81AE7") is READER
    assert (
        role_of(
            "/subscriptions/s/providers/Microsoft.Authorization/roleDefinitions/b24988ac-6180-42a0-ab88-20f7382dd24c"
        )
        is CONTRIBUTOR
    )
    assert role_of("/providers/Microsoft.Authorization/roleDefinitions/nope") is None


def test_scopes_nest_by_whole_segments_ignoring_case() -> None:
    group = "/subscriptions/s/resourceGroups/rg"
    assert covers("/", group) and covers("/subscriptions/S", group) and covers(group, group)
    assert covers(group, f"{group}/providers/Microsoft.Scheduler/jobCollections/jc")
    assert not covers(group, "/subscriptions/s/resourceGroups/rg2")  # a prefix of the name is not a parent
    assert not covers(f"{group}/providers/Microsoft.Scheduler/jobCollections/jc", group)
