"""The management API of Microsoft.Scheduler (api-versions: shared/model/versions.py), one function per operation.

`OPERATIONS` (operations.py) lists every operation with its method, route and handler; `handle` runs one
by name with the process runtime, after the caller passed shared/auth, and turns every failure into an ARM error.
`OpenApi_Get` (anonymous) serves our OpenAPI documents (one per documented api-version), `Health_Get`
(anonymous) the health report (health.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..errors import ApiError
from ..runtime import Runtime, runtime
from ..telemetry import traced_api
from .access import admit, filtered
from .common import refuse_repeated_query
from .health import health_response
from .http import ApiRequest, ApiResponse, run_operation
from .newer import older_answer
from .openapi import openapi_document
from .operations import HANDLERS, OPERATIONS, WHAT_IF_OPERATIONS, Handler, methods_at, operation_at
from .what_if import refuse_unapplied_what_if


def _openapi(request: ApiRequest) -> ApiResponse:
    return ApiResponse(200, openapi_document(request.url))


@traced_api
def handle(operation: str, request: ApiRequest, rt: Runtime | None = None) -> ApiResponse:
    """Run the named operation; `rt` defaults to this process's runtime (tests pass their own)."""
    if operation == "OpenApi_Get":
        return run_operation(_openapi, request)  # needs no storage, so no runtime
    if operation == "Health_Get":  # anonymous; reports an unreachable storage instead of failing on it
        return run_operation(lambda req: health_response(lambda: rt or runtime()), request, operation)
    handler = HANDLERS.get(operation)
    if handler is None:
        return run_operation(_unsupported(operation), request)
    return run_operation(lambda req: _admitted(operation, handler, rt or runtime(), req), request, operation)


def _admitted(operation: str, handler: Handler, rt: Runtime, request: ApiRequest) -> ApiResponse:
    """Authenticate and authorize first (401/403 before anything is read or stored), refuse a repeated query
    parameter and a what-if the operation does not answer (what_if.py), then run the handler."""
    access = admit(rt, operation, request)
    refuse_repeated_query(request)
    refuse_unapplied_what_if(operation, request, operation in WHAT_IF_OPERATIONS)
    if access.principal is not None:
        request = dataclasses.replace(request, caller=access.principal.object_id, readable=access.visible)
    return filtered(access, older_answer(operation, request, handler(rt, request)))


def _unsupported(operation: str) -> Callable[[ApiRequest], ApiResponse]:
    def reject(request: ApiRequest) -> ApiResponse:
        raise ApiError(405, "InvalidHttpVerb", f"{request.method} is not supported here ({operation}).")

    return reject


__all__ = ["OPERATIONS", "ApiRequest", "ApiResponse", "handle", "methods_at", "operation_at"]
