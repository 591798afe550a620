"""Role assignments, managed as ARM's Microsoft.Authorization/roleAssignments are (api-version 2022-04-01).

`{scope}/providers/Microsoft.Authorization/roleAssignments[/{name}]` where scope is a subscription, a
resource group or a job collection. PUT creates (names are GUIDs; an assignment never changes: another
PUT of the name with other content is 409, as in ARM), GET reads, DELETE removes (200 with the removed
assignment, 204 when there was none), and the list answers the assignments at, above and below the scope
(`$filter=atScope()`: at and above; `$filter=principalId eq '{id}'`: one principal's). Who may call each
is decided before the handler runs (shared/auth: only Owners write or delete).
"""

from __future__ import annotations

import re
from typing import Any

from ..auth.roles import ROLES, role_of
from ..auth.scopes import covers, scope_of
from ..errors import ApiError, bad_request
from ..keys import fold_case
from ..model.base import format_utc
from ..runtime import Runtime
from ..store import ConcurrencyError, RoleAssignmentRecord
from .common import query_value, read_json
from .http import ApiRequest, ApiResponse

API_VERSIONS = ("2022-04-01", "2020-10-01-preview", "2020-04-01-preview", "2018-09-01-preview",
                "2018-01-01-preview", "2015-07-01")
TYPE = "Microsoft.Authorization/roleAssignments"
PRINCIPAL_TYPES = {t.lower(): t for t in ("User", "Group", "ServicePrincipal", "ForeignGroup", "Device")}
_GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PRINCIPAL_FILTER = re.compile(r"\s*principalId\s+eq\s+'([^']*)'\s*", re.IGNORECASE)


def _version(request: ApiRequest) -> None:
    version = query_value(request, "api-version")
    if version not in API_VERSIONS:
        raise ApiError(400, "MissingOrInvalidRequiredQueryParameter",
                       f"The api-version query parameter is missing or not supported; supported versions: "
                       f"{', '.join(API_VERSIONS)}.")


def _name(request: ApiRequest) -> str:
    name = next((v for k, v in request.route.items() if k.lower() == "roleassignmentname"), "")
    if not _GUID.fullmatch(name):
        raise ApiError(400, "InvalidRoleAssignmentId", "The role assignment ID is not valid. The role assignment "
                       "ID must be a GUID.")
    return name.lower()


def render(record: RoleAssignmentRecord) -> dict[str, Any]:
    created = format_utc(record.created_on)
    return {
        "id": f"{record.scope}/providers/{TYPE}/{record.name}", "name": record.name, "type": TYPE,
        "properties": {
            "roleDefinitionId": f"/subscriptions/{record.subscription}/providers/Microsoft.Authorization/"
                                f"roleDefinitions/{record.role_id}",
            "principalId": record.principal_id, "principalType": record.principal_type or None,
            "scope": record.scope, "createdOn": created, "updatedOn": created,
            "createdBy": record.created_by, "updatedBy": record.created_by,
        },
    }


def _not_found() -> ApiError:
    return ApiError(404, "RoleAssignmentNotFound", "The role assignment was not found at this scope.")


def _at_scope(rt: Runtime, request: ApiRequest) -> tuple[str, str, RoleAssignmentRecord | None]:
    scope, subscription = scope_of(request)
    record = rt.store.role_assignments.get(subscription, _name(request))
    if record is not None and fold_case(record.scope) != fold_case(scope):
        record = None  # the name exists, but at another scope: not this scope's to show
    return scope, subscription, record


def get_role_assignment(rt: Runtime, request: ApiRequest) -> ApiResponse:
    _version(request)
    _, _, record = _at_scope(rt, request)
    if record is None:
        raise _not_found()
    return ApiResponse(200, render(record))


def delete_role_assignment(rt: Runtime, request: ApiRequest) -> ApiResponse:
    _version(request)
    _, subscription, record = _at_scope(rt, request)
    if record is None or not rt.store.role_assignments.delete(subscription, record.name):
        return ApiResponse(204)
    return ApiResponse(200, render(record))


def _properties(request: ApiRequest) -> tuple[str, str, str]:
    """(role id, principal id, principal type) from a PUT body; 400 naming the bad property."""
    body = read_json(request)
    properties = body.get("properties")
    if not isinstance(properties, dict):
        raise bad_request("The role assignment needs its properties.", "properties")
    definition = properties.get("roleDefinitionId")
    role = role_of(definition) if isinstance(definition, str) else None
    if role is None:
        raise ApiError(400, "RoleDefinitionDoesNotExist", "The specified role definition does not exist; the "
                       f"roles are {', '.join(f'{r.name} ({r.id})' for r in ROLES.values())}.")
    principal = properties.get("principalId")
    if not isinstance(principal, str) or not _GUID.fullmatch(principal):
        raise ApiError(400, "InvalidPrincipalId", "A valid principal ID must be provided for role assignment.")
    kind = properties.get("principalType")
    if kind is not None and (not isinstance(kind, str) or kind.lower() not in PRINCIPAL_TYPES):
        raise bad_request(f"The principal type must be one of {', '.join(PRINCIPAL_TYPES.values())}.",
                          "properties.principalType")
    return role.id, principal.lower(), PRINCIPAL_TYPES[kind.lower()] if kind else ""


def create_role_assignment(rt: Runtime, request: ApiRequest) -> ApiResponse:
    _version(request)
    scope, subscription = scope_of(request)
    name = _name(request)
    role_id, principal, kind = _properties(request)
    existing = rt.store.role_assignments.get(subscription, name)
    if existing is not None:
        if (fold_case(existing.scope), existing.role_id, existing.principal_id) != (fold_case(scope), role_id,
                                                                                    principal):
            raise ApiError(409, "RoleAssignmentUpdateNotPermitted", "Tenant ID, application ID, principal ID, "
                           "and scope are not allowed to be updated.")
        return ApiResponse(201, render(existing))
    for other in rt.store.role_assignments.for_subscription(subscription):
        if (fold_case(other.scope), other.role_id, other.principal_id) == (fold_case(scope), role_id, principal):
            raise ApiError(409, "RoleAssignmentExists", "The role assignment already exists.")
    record = RoleAssignmentRecord(
        subscription=subscription, name=name, scope=scope, role_id=role_id, principal_id=principal,
        principal_type=kind, created_on=rt.clock.now(), created_by=request.caller,
    )
    try:
        rt.store.role_assignments.insert(record)
    except ConcurrencyError:  # a concurrent PUT of the same name won: answer as for an existing name
        return create_role_assignment(rt, request)
    return ApiResponse(201, render(record))


def list_role_assignments(rt: Runtime, request: ApiRequest) -> ApiResponse:
    _version(request)
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
    found = [
        record for record in rt.store.role_assignments.for_subscription(subscription)
        if (covers(record.scope, scope) or (not at_scope and covers(scope, record.scope)))
        and (principal is None or record.principal_id == principal)
    ]
    found.sort(key=lambda r: (fold_case(r.scope), r.name))
    return ApiResponse(200, {"value": [render(r) for r in found]})
