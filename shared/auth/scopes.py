"""What each API operation needs: the ARM action, and the scope (from the route) it is checked over.

Scopes are ARM resource ids: `/subscriptions/{s}`, `.../resourceGroups/{rg}`,
`.../providers/Microsoft.Scheduler/jobCollections/{jc}`; `/` (every subscription) holds the bootstrap
Owner. A grant at a scope covers every scope below it. Jobs are authorized at their collection's scope
(as roles cannot be assigned per job). An operation missing from the table needs the Owner-or-Contributor
action `Microsoft.Scheduler/{operation}/action`, so a route added without an entry here fails closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..keys import fold_case
from .roles import COLLECTIONS, JOBS, PROVIDER, ROLE_ASSIGNMENTS

if TYPE_CHECKING:
    from ..api.http import ApiRequest

ROOT = "/"

# operation -> (action, scope level); a level of None means "the deepest scope the route names".
_ACTIONS: dict[str, tuple[str, str | None]] = {
    "JobCollections_ListBySubscription": (f"{COLLECTIONS}/read", "subscription"),
    "JobCollections_ListByResourceGroup": (f"{COLLECTIONS}/read", "group"),
    "JobCollections_Get": (f"{COLLECTIONS}/read", "collection"),
    "JobCollections_CreateOrUpdate": (f"{COLLECTIONS}/write", "collection"),
    "JobCollections_Patch": (f"{COLLECTIONS}/write", "collection"),
    "JobCollections_Delete": (f"{COLLECTIONS}/delete", "collection"),
    "JobCollections_Enable": (f"{COLLECTIONS}/enable/action", "collection"),
    "JobCollections_Disable": (f"{COLLECTIONS}/disable/action", "collection"),
    "Jobs_Get": (f"{JOBS}/read", "collection"),
    "Jobs_List": (f"{JOBS}/read", "collection"),
    "Jobs_ListJobHistory": (f"{JOBS}/read", "collection"),
    "Jobs_CreateOrUpdate": (f"{JOBS}/write", "collection"),
    "Jobs_Patch": (f"{JOBS}/write", "collection"),
    "Jobs_Delete": (f"{JOBS}/delete", "collection"),
    "Jobs_Run": (f"{JOBS}/run/action", "collection"),
    "Jobs_ListOccurrences": (f"{JOBS}/read", "collection"),
    "Jobs_Backfill": (f"{JOBS}/backfill/action", "collection"),
    "RoleAssignments_ListForScope": (f"{ROLE_ASSIGNMENTS}/read", None),
    "RoleAssignments_Get": (f"{ROLE_ASSIGNMENTS}/read", None),
    "RoleAssignments_Create": (f"{ROLE_ASSIGNMENTS}/write", None),
    "RoleAssignments_Delete": (f"{ROLE_ASSIGNMENTS}/delete", None),
}

# Lists whose answer is cut down to what the caller may read, instead of a 403, when the caller may read
# only some of the scopes below the one listed.
FILTERED_LISTS = frozenset({"JobCollections_ListBySubscription", "JobCollections_ListByResourceGroup"})


@dataclass(frozen=True)
class Requirement:
    action: str
    scope: str
    subscription: str


def scope_of(request: ApiRequest, level: str | None = None) -> tuple[str, str]:
    """(scope, subscription) of the request's route, at `level` (subscription/group/collection) or its deepest.

    The names are validated first (400, never quoted), so a scope only ever holds well-formed names.
    """
    from ..api import paths  # imported here: shared.api imports this package

    def named(name: str) -> bool:
        return any(key.lower() == name.lower() for key in request.route)

    subscription = paths.subscription_id(request)
    scope = f"/subscriptions/{subscription}"
    if level == "subscription" or not named("resourceGroupName"):
        return scope, subscription
    scope += f"/resourceGroups/{paths.resource_group(request)}"
    if level == "group" or not named("jobCollectionName"):
        return scope, subscription
    return paths.collection_key(request).resource_id, subscription


def requirement_for(operation: str, request: ApiRequest) -> Requirement:
    action, level = _ACTIONS.get(operation, (f"{PROVIDER}/{operation}/action", "subscription"))
    scope, subscription = scope_of(request, level)
    return Requirement(action, scope, subscription)


def covers(outer: str, inner: str) -> bool:
    """True when a grant at `outer` applies at `inner` (the same scope or one below it; ARM names fold case)."""
    if outer == ROOT:
        return True
    outer, inner = fold_case(outer.rstrip("/")), fold_case(inner.rstrip("/"))
    return inner == outer or inner.startswith(outer + "/")
