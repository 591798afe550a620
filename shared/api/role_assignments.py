"""Role assignments, managed as ARM's Microsoft.Authorization/roleAssignments are (api-version 2022-04-01).

`{scope}/providers/Microsoft.Authorization/roleAssignments[/{name}]` where scope is a subscription, a
resource group or a job collection. PUT creates (names are GUIDs; an assignment never changes: another
PUT of the name with other content is 409, as in ARM), GET reads, DELETE removes (200 with the removed
assignment, 204 when there was none), and the list answers the assignments at, above and below the scope
(`$filter=atScope()`: at and above; `$filter=principalId eq '{id}'`: one principal's). Who may call each
is decided before the handler runs (shared/auth: only Owners write or delete). HTTP only: the
assignments themselves are shared/auth/assignments.py's, whose refusals become ARM's errors at the API's
boundary (shared/api/http.py), as the lifecycle's do.
"""

from __future__ import annotations

import re
from typing import Any

from ..auth.assignments import Assignment, assign, get_assignment, list_assignments, remove_assignment
from ..auth.roles import ROLES, role_of
from ..errors import ApiError, bad_request
from ..keys import fold_case
from ..model import format_utc
from ..runtime import Runtime
from ..store import RoleAssignmentRecord
from .access import scope_of
from .common import query_value, read_json
from .http import ApiRequest, ApiResponse
from .paging import MAX_PAGE, PageRequest, continuation_link, resume, skiptoken

API_VERSIONS = (
    "2022-04-01",
    "2020-10-01-preview",
    "2020-04-01-preview",
    "2018-09-01-preview",
    "2018-01-01-preview",
    "2015-07-01",
)
TYPE = "Microsoft.Authorization/roleAssignments"
PRINCIPAL_TYPES = {t.lower(): t for t in ("User", "Group", "ServicePrincipal", "ForeignGroup", "Device")}
_GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PRINCIPAL_FILTER = re.compile(r"\s*principalId\s+eq\s+'([^']*)'\s*", re.IGNORECASE)


def _version(request: ApiRequest) -> None:
    version = query_value(request, "api-version")
    if version not in API_VERSIONS:
        raise ApiError(
            400,
            "MissingOrInvalidRequiredQueryParameter",
            f"The api-version query parameter is missing or not supported; supported versions: "
            f"{', '.join(API_VERSIONS)}.",
        )


def _name(request: ApiRequest) -> str:
    name = next((v for k, v in request.route.items() if k.lower() == "roleassignmentname"), "")
    if not _GUID.fullmatch(name):
        raise ApiError(
            400,
            "InvalidRoleAssignmentId",
            "The role assignment ID is not valid. The role assignment ID must be a GUID.",
        )
    return name.lower()


def render(record: RoleAssignmentRecord) -> dict[str, Any]:
    created = format_utc(record.created_on)
    return {
        "id": f"{record.scope}/providers/{TYPE}/{record.name}",
        "name": record.name,
        "type": TYPE,
        "properties": {
            "roleDefinitionId": f"/subscriptions/{record.subscription}/providers/Microsoft.Authorization/"
            f"roleDefinitions/{record.role_id}",
            "principalId": record.principal_id,
            "principalType": record.principal_type or None,
            "scope": record.scope,
            "createdOn": created,
            "updatedOn": created,
            "createdBy": record.created_by,
            "updatedBy": record.created_by,
        },
    }


def get_role_assignment(rt: Runtime, request: ApiRequest) -> ApiResponse:
    _version(request)
    scope, subscription = scope_of(request)
    return ApiResponse(200, render(get_assignment(rt, subscription, scope, _name(request))))


def delete_role_assignment(rt: Runtime, request: ApiRequest) -> ApiResponse:
    _version(request)
    scope, subscription = scope_of(request)
    record = remove_assignment(rt, subscription, scope, _name(request))
    return ApiResponse(204) if record is None else ApiResponse(200, render(record))


def _once(members: dict[str, Any], where: str) -> None:
    """400 for a member named twice in different cases: which of them would be meant is anyone's guess."""
    seen: set[str] = set()
    for key in members:
        if fold_case(key) in seen:
            raise bad_request(f"The member {key[:100]!r} is given twice (property names ignore case).", where)
        seen.add(fold_case(key))


def _properties(request: ApiRequest, subscription: str) -> tuple[str, str, str]:
    """(role id, principal id, principal type) from a PUT body; 400 naming the bad property."""
    body = read_json(request)
    _once(body, "")
    properties = body.get("properties")
    if not isinstance(properties, dict):
        raise bad_request("The role assignment needs its properties.", "properties")
    _once(properties, "properties")
    definition = properties.get("roleDefinitionId")
    # Exactly a role's id (auth/roles.py): `../../../roleDefinitions/{Owner's id}` names no role.
    role = role_of(definition, subscription) if isinstance(definition, str) else None
    if role is None:
        raise ApiError(
            400,
            "RoleDefinitionDoesNotExist",
            "The specified role definition does not exist; the "
            f"roles are {', '.join(f'{r.name} ({r.id})' for r in ROLES.values())}.",
        )
    principal = properties.get("principalId")
    if not isinstance(principal, str) or not _GUID.fullmatch(principal):
        raise ApiError(400, "InvalidPrincipalId", "A valid principal ID must be provided for role assignment.")
    kind = properties.get("principalType")
    if kind is not None and (not isinstance(kind, str) or kind.lower() not in PRINCIPAL_TYPES):
        raise bad_request(
            f"The principal type must be one of {', '.join(PRINCIPAL_TYPES.values())}.", "properties.principalType"
        )
    return role.id, principal.lower(), PRINCIPAL_TYPES[kind.lower()] if kind else ""


def create_role_assignment(rt: Runtime, request: ApiRequest) -> ApiResponse:
    _version(request)
    scope, subscription = scope_of(request)
    name = _name(request)
    role_id, principal, kind = _properties(request, subscription)
    wanted = Assignment(subscription, scope, name, role_id, principal, kind)
    return ApiResponse(201, render(assign(rt, wanted, created_by=request.caller)))


def list_role_assignments(rt: Runtime, request: ApiRequest) -> ApiResponse:
    _version(request)
    for unapplied in ("$top", "$skip"):  # ARM's roleAssignments list takes neither; a cap not applied is refused
        if query_value(request, unapplied) is not None:
            raise bad_request(f"{unapplied} is not supported by this list; follow nextLink instead.", unapplied)
    scope, subscription = scope_of(request)
    text = query_value(request, "$filter")
    principal: str | None = None
    at_scope = False
    if text is not None and text.strip():
        if text.strip().lower() == "atscope()":
            at_scope = True
        elif (match := _PRINCIPAL_FILTER.fullmatch(text)) is not None:
            principal = match.group(1).lower()
        else:
            raise bad_request("Supported filters are atScope() and principalId eq '{id}'.", "$filter")
    found = list_assignments(rt, subscription, scope, at_scope=at_scope, principal=principal)
    # Paged as ARM pages them: `nextLink` (with our sealed $skiptoken, paging.py) only when more follow.
    query = f"atScope={at_scope};principal={principal or ''}"
    page = PageRequest(size=MAX_PAGE, skip=0, token=skiptoken(request))
    after = resume(rt, request, page, "roleAssignments", query)
    if after is not None:
        if not (isinstance(after, list) and len(after) == 2 and all(isinstance(part, str) for part in after)):
            raise bad_request("The continuation token is not one of this list's.", "$skiptoken")
        found = [r for r in found if _position(r) > (after[0], after[1])]
    more = len(found) > page.size
    found = found[: page.size]
    body: dict[str, Any] = {"value": [render(r) for r in found]}
    if more:
        body["nextLink"] = continuation_link(rt, request, "roleAssignments", list(_position(found[-1])), query)
    return ApiResponse(200, body)


def _position(record: RoleAssignmentRecord) -> tuple[str, str]:
    """Where an assignment lies in a list's order (auth/assignments.py sorts by folded scope, then name)."""
    return fold_case(record.scope), record.name
