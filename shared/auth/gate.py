"""The API boundary's access check: authenticate the caller, then authorize the operation over its scope.

Contract: `admit(rt, operation, request)` runs before any operation touches storage for the request. It
returns an `Access` (who called, and for a list the scopes whose items the caller may see) or raises the
401/403 ApiError; a refused request therefore runs nothing and stores nothing. In `key` and `none` modes
the app admits everything (the Functions host, or nobody, has checked the caller). In `entra` mode the
caller's grants are the role assignments of the request's subscription naming its object id or one of
its groups, plus Owner over every scope for the bootstrap owners (`SCHEDULER_AUTH_OWNER`: object ids of
users, service principals or groups).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import errors
from .principal import Principal
from .roles import OWNER, Role, role_of
from .scopes import FILTERED_LISTS, ROOT, covers, requirement_for
from .tokens import validator_for

if TYPE_CHECKING:  # the API imports this module: no import back at run time
    from ..api.http import ApiRequest, ApiResponse
    from ..runtime import Runtime


@dataclass(frozen=True)
class Grant:
    scope: str
    role: Role


@dataclass(frozen=True)
class Access:
    principal: Principal | None  # None: the app does not authenticate (key or none mode)
    visible: tuple[str, ...] | None = None  # a list cut down to items under these scopes; None: all

    def apply(self, response: ApiResponse) -> ApiResponse:
        """Drop the list items the caller may not read (a page may come out short; nextLink still continues)."""
        if self.visible is None or response.status != 200 or not isinstance(response.body, dict):
            return response
        items: list[Any] = response.body.get("value") or []
        kept = [item for item in items if isinstance(item, dict) and isinstance(item.get("id"), str)
                and any(covers(scope, item["id"]) for scope in self.visible)]
        return dataclasses.replace(response, body={**response.body, "value": kept})


UNRESTRICTED = Access(principal=None)


def admit(rt: Runtime, operation: str, request: ApiRequest) -> Access:
    settings = rt.settings.auth
    if settings.mode != "entra":
        return UNRESTRICTED
    principal = validator_for(settings).principal(request.headers)
    need = requirement_for(operation, request)
    grants = grants_of(rt, principal, need.subscription)
    if any(covers(g.scope, need.scope) and g.role.allows(need.action) for g in grants):
        return Access(principal)
    if operation in FILTERED_LISTS:
        below = tuple(g.scope for g in grants if covers(need.scope, g.scope) and g.role.allows(need.action))
        if below:
            return Access(principal, below)
    raise errors.forbidden(principal, need.action, need.scope)


def grants_of(rt: Runtime, principal: Principal, subscription: str) -> list[Grant]:
    ids = principal.ids
    grants = [Grant(ROOT, OWNER)] if ids & set(rt.settings.auth.owners) else []
    for assignment in rt.store.role_assignments.for_principals(subscription, ids):
        role = role_of(assignment.role_id)
        if role is not None:
            grants.append(Grant(assignment.scope, role))
    return grants
