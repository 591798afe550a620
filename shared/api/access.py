"""What each API operation needs, computed from its route: the ARM action and the scope it is checked over.

The API's half of authorization (shared/auth holds roles, tokens and grants and knows nothing of HTTP):
`requirement_for` turns an operation and its route into an `auth.Requirement`, and `admit` hands it to
`auth.admit` and cuts a list answer down to what the caller may read (`filtered`).

Scopes are ARM resource ids: `/subscriptions/{s}`, `.../resourceGroups/{rg}`,
`.../providers/Microsoft.Scheduler/jobCollections/{jc}`. Jobs are authorized at their collection's scope (as
roles cannot be assigned per job). An operation missing from the table needs the Owner-or-Contributor
action `Microsoft.Scheduler/{operation}/action`, so a route added without an entry here fails closed.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from .. import auth
from ..auth.roles import COLLECTIONS, JOBS, PROVIDER, ROLE_ASSIGNMENTS
from . import paths
from .http import ApiRequest, ApiResponse

if TYPE_CHECKING:
    from ..runtime import Runtime

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
    "Jobs_GetOccurrence": (f"{JOBS}/read", "collection"),
    "Jobs_ListAttempts": (f"{JOBS}/read", "collection"),
    "Jobs_Backfill": (f"{JOBS}/run/action", "collection"),  # runs past occurrences now: who may run, may backfill
    "JobCollections_Forecast": (f"{JOBS}/read", "collection"),  # what the jobs' schedules say, counted
    "Subscription_Forecast": (f"{JOBS}/read", "subscription"),  # cut down to the collections the caller may read
    # The deployment's destinations (api/destinations.py): who may read the subscription's jobs. Not a filtered
    # list: no destination belongs to a collection, so a caller who may read only some of them is refused.
    "Destinations_List": (f"{JOBS}/read", "subscription"),
    # Dead letters: reading them reads history; a replay runs an occurrence again; a purge deletes history.
    "DeadLetters_List": (f"{JOBS}/read", "collection"),
    "DeadLetters_Get": (f"{JOBS}/read", "collection"),
    "DeadLetters_Replay": (f"{JOBS}/run/action", "collection"),
    "DeadLetters_ReplayMany": (f"{JOBS}/run/action", "collection"),
    "DeadLetters_Delete": (f"{JOBS}/write", "collection"),
    "DeadLetters_Purge": (f"{JOBS}/write", "collection"),
    "RoleAssignments_ListForScope": (f"{ROLE_ASSIGNMENTS}/read", None),
    "RoleAssignments_Get": (f"{ROLE_ASSIGNMENTS}/read", None),
    "RoleAssignments_Create": (f"{ROLE_ASSIGNMENTS}/write", None),
    "RoleAssignments_Delete": (f"{ROLE_ASSIGNMENTS}/delete", None),
}

# Lists whose answer is cut down to what the caller may read, instead of a 403, when the caller may read
# only some of the scopes below the one listed (the subscription's forecast counts only those: api/forecast.py).
FILTERED_LISTS = frozenset(
    {"JobCollections_ListBySubscription", "JobCollections_ListByResourceGroup", "Subscription_Forecast"}
)


def scope_of(request: ApiRequest, level: str | None = None) -> tuple[str, str]:
    """(scope, subscription) of the request's route, at `level` (subscription/group/collection) or its deepest.

    The names are validated first (400, never quoted), so a scope only ever holds well-formed names.
    """

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


def requirement_for(operation: str, request: ApiRequest) -> auth.Requirement:
    action, level = _ACTIONS.get(operation, (f"{PROVIDER}/{operation}/action", "subscription"))
    scope, subscription = scope_of(request, level)
    return auth.Requirement(action, scope, subscription)


def admit(rt: Runtime, operation: str, request: ApiRequest) -> auth.Access:
    """The caller's access to the operation (401/403 ApiError when refused); checks nothing outside entra mode."""
    if not auth.authenticates(rt.settings.auth):
        return auth.UNRESTRICTED
    return auth.admit(rt, request.headers, requirement_for(operation, request), operation in FILTERED_LISTS)


def filtered(access: auth.Access, response: ApiResponse) -> ApiResponse:
    """Drop the list items the caller may not read. A second guard: the filtered lists cut themselves down
    while reading (`ApiRequest.readable`, shared/api/collections.py), so that pages stay full and a page's
    continuation never lies on an item the caller may not read."""
    if access.visible is None or response.status != 200 or not isinstance(response.body, dict):
        return response
    if "value" not in response.body:  # not a list of resources (a forecast): its handler read only those
        return response
    items: list[Any] = response.body.get("value") or []
    kept = [
        item
        for item in items
        if isinstance(item, dict) and isinstance(item.get("id"), str) and access.may_read(item["id"])
    ]
    return dataclasses.replace(response, body={**response.body, "value": kept})
