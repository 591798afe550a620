"""The management API of Microsoft.Scheduler 2016-03-01, one function per operation.

`OPERATIONS` maps operation names (the OpenAPI operationIds) to handlers; `handle` runs one with the
process runtime, after the caller passed shared/auth, and turns every failure into an ARM error.
`OpenApi_Get` (anonymous) serves our OpenAPI document, `Health_Get` (anonymous) the health report (health.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .. import auth
from ..errors import ApiError
from ..runtime import Runtime, runtime
from ..telemetry import traced_api
from .collections import (
    delete_collection,
    disable_collection,
    enable_collection,
    get_collection,
    list_by_resource_group,
    list_by_subscription,
    patch_collection,
    put_collection,
)
from .health import health_response
from .http import ApiRequest, ApiResponse, run_operation
from .jobs import delete_job, get_job, list_history, list_jobs, patch_job, put_job, run_job
from .openapi import openapi_document
from .role_assignments import (
    create_role_assignment,
    delete_role_assignment,
    get_role_assignment,
    list_role_assignments,
)

Operation = Callable[[Runtime, ApiRequest], ApiResponse]

OPERATIONS: dict[str, Operation] = {
    "JobCollections_ListBySubscription": list_by_subscription,
    "JobCollections_ListByResourceGroup": list_by_resource_group,
    "JobCollections_Get": get_collection,
    "JobCollections_CreateOrUpdate": put_collection,
    "JobCollections_Patch": patch_collection,
    "JobCollections_Delete": delete_collection,
    "JobCollections_Enable": enable_collection,
    "JobCollections_Disable": disable_collection,
    "Jobs_Get": get_job,
    "Jobs_CreateOrUpdate": put_job,
    "Jobs_Patch": patch_job,
    "Jobs_Delete": delete_job,
    "Jobs_Run": run_job,
    "Jobs_List": list_jobs,
    "Jobs_ListJobHistory": list_history,
    "RoleAssignments_ListForScope": list_role_assignments,
    "RoleAssignments_Get": get_role_assignment,
    "RoleAssignments_Create": create_role_assignment,
    "RoleAssignments_Delete": delete_role_assignment,
}


def _openapi(request: ApiRequest) -> ApiResponse:
    return ApiResponse(200, openapi_document(request.url))


@traced_api
def handle(operation: str, request: ApiRequest, rt: Runtime | None = None) -> ApiResponse:
    """Run the named operation; `rt` defaults to this process's runtime (tests pass their own)."""
    if operation == "OpenApi_Get":
        return run_operation(_openapi, request)  # needs no storage, so no runtime
    if operation == "Health_Get":  # anonymous; reports an unreachable storage instead of failing on it
        return run_operation(lambda req: health_response(lambda: rt or runtime()), request, operation)
    handler = OPERATIONS.get(operation)
    if handler is None:
        return run_operation(_unsupported(operation), request)
    return run_operation(lambda req: _admitted(operation, handler, rt or runtime(), req), request, operation)


def _admitted(operation: str, handler: Operation, rt: Runtime, request: ApiRequest) -> ApiResponse:
    """Authenticate and authorize first (401/403 before anything is read or stored), then run the handler."""
    access = auth.admit(rt, operation, request)
    if access.principal is not None:
        request = dataclasses.replace(request, caller=access.principal.object_id)
    return access.apply(handler(rt, request))


def _unsupported(operation: str) -> Callable[[ApiRequest], ApiResponse]:
    def reject(request: ApiRequest) -> ApiResponse:
        raise ApiError(405, "InvalidHttpVerb", f"{request.method} is not supported here ({operation}).")

    return reject


__all__ = ["OPERATIONS", "ApiRequest", "ApiResponse", "handle"]
