"""The built-in roles and their actions, as Azure defines them (same ids, names and action patterns).

An action is allowed by a role when it matches one of the role's `actions` and none of its `not_actions`;
patterns are ARM's: case-insensitive, `*` matches any run of characters (slashes included).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

PROVIDER = "Microsoft.Scheduler"
COLLECTIONS = f"{PROVIDER}/jobCollections"
JOBS = f"{COLLECTIONS}/jobs"
ROLE_ASSIGNMENTS = "Microsoft.Authorization/roleAssignments"


@dataclass(frozen=True)
class Role:
    id: str  # the role definition GUID Azure uses for the built-in role
    name: str
    actions: tuple[str, ...]
    not_actions: tuple[str, ...] = ()

    def allows(self, action: str) -> bool:
        return any(_pattern(p).fullmatch(action) for p in self.actions) and not any(
            _pattern(p).fullmatch(action) for p in self.not_actions
        )


OWNER = Role("8e3af657-a8ff-443c-a75c-2fe8c4bcb635", "Owner", ("*",))
CONTRIBUTOR = Role(
    "b24988ac-6180-42a0-ab88-20f7382dd24c",
    "Contributor",
    ("*",),
    (
        "Microsoft.Authorization/*/Delete",
        "Microsoft.Authorization/*/Write",
        "Microsoft.Authorization/elevateAccess/Action",
    ),
)
READER = Role("acdd72a7-3385-48ef-bd42-f606fba81ae7", "Reader", ("*/read",))

ROLES: dict[str, Role] = {role.id: role for role in (OWNER, CONTRIBUTOR, READER)}


def role_of(definition_id: str) -> Role | None:
    """A role from its id: the bare GUID or a full `.../providers/Microsoft.Authorization/roleDefinitions/{guid}`."""
    return ROLES.get(definition_id.rstrip("/").rsplit("/", 1)[-1].strip().lower())


@lru_cache(maxsize=64)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.IGNORECASE)
