"""The built-in roles and their actions, as Azure defines them (same ids, names and action patterns).

An action is allowed by a role when it matches one of the role's `actions` and none of its `not_actions`;
patterns are ARM's: case-insensitive, `*` matches any run of characters (slashes included).

A role definition id names a role exactly (`role_of`): the bare GUID, or the role definition's resource id,
`/providers/Microsoft.Authorization/roleDefinitions/{guid}` alone or under `/subscriptions/{subscription}` (the
assignment's own subscription). Nothing else does: no relative segments (`../../roleDefinitions/{guid}`), no other
path ending in a role's GUID, no whitespace or control characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..keys import fold_case

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


_GUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_DEFINITION_ID = re.compile(
    rf"(?:/subscriptions/(?P<subscription>[A-Za-z0-9_-][A-Za-z0-9._-]*))?"
    rf"/providers/Microsoft\.Authorization/roleDefinitions/(?P<guid>{_GUID})|(?P<bare>{_GUID})",
    re.IGNORECASE | re.ASCII,
)


def role_of(definition_id: str, subscription: str | None = None) -> Role | None:
    """The role a role definition id names exactly (see the module's rules); None for any other text. With
    `subscription`, an id under `/subscriptions/...` must name that one."""
    match = _DEFINITION_ID.fullmatch(definition_id)
    if match is None:
        return None
    named = match["subscription"]
    if subscription is not None and named is not None and fold_case(named) != fold_case(subscription):
        return None
    return ROLES.get((match["guid"] or match["bare"]).lower())


@lru_cache(maxsize=64)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.IGNORECASE)
