"""The access check: authenticate the caller, then authorize a requirement (an action over a scope).

Contract: the API calls `admit(rt, headers, requirement, filtered)` before any operation touches storage for
the request. It returns an `Access` (who called, and for a list the scopes whose items the caller may see)
or raises the 401/403 ApiError; a refused request therefore runs nothing and stores nothing. In `key` and `none` modes
the app admits everything (the Functions host, or nobody, has checked the caller). In `entra` mode the
caller's grants are the role assignments of the request's subscription naming its object id or one of
its groups, plus Owner over every scope for the bootstrap owners (`SCHEDULER_AUTH_OWNER`: object ids of
users, service principals or groups).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..settings import AuthSettings
from . import errors
from .principal import Principal
from .roles import OWNER, Role, role_of
from .scopes import ROOT, Requirement, covers
from .tokens import validator_for

if TYPE_CHECKING:
    from ..runtime import Runtime


@dataclass(frozen=True)
class Grant:
    scope: str
    role: Role


@dataclass(frozen=True)
class Access:
    principal: Principal | None  # None: the app does not authenticate (key or none mode)
    visible: tuple[str, ...] | None = None  # a list cut down to items under these scopes; None: all

    def may_read(self, resource_id: str) -> bool:
        """The caller may see this item of a list."""
        return self.visible is None or any(covers(scope, resource_id) for scope in self.visible)


UNRESTRICTED = Access(principal=None)


def authenticates(settings: AuthSettings) -> bool:
    """The app checks callers itself (entra mode); in key and none modes the host, or nobody, has."""
    return settings.mode == "entra"


def admit(rt: Runtime, headers: Mapping[str, str], need: Requirement, filtered: bool = False) -> Access:
    """The caller's access for `need`; with `filtered`, a caller who may read only some scopes below it gets
    an Access limited to those (a list cut down) instead of a 403."""
    settings = rt.settings.auth
    if not authenticates(settings):
        return UNRESTRICTED
    principal = validator_for(settings).principal(headers)
    grants = grants_of(rt, principal, need.subscription)
    if any(covers(g.scope, need.scope) and g.role.allows(need.action) for g in grants):
        return Access(principal)
    if filtered:
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
