"""The management API of Microsoft.Scheduler 2016-03-01, one function per operation.

`OPERATIONS` maps operation names (the OpenAPI operationIds) to handlers; `handle` runs one with the
process runtime and turns every failure into an ARM error.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ApiError
from ..runtime import Runtime, runtime
from .collections import get_collection, put_collection
from .history import list_history
from .http import ApiRequest, ApiResponse, run_operation
from .jobs import delete_job, get_job, put_job

Operation = Callable[[Runtime, ApiRequest], ApiResponse]

OPERATIONS: dict[str, Operation] = {
    "JobCollections_Get": get_collection,
    "JobCollections_CreateOrUpdate": put_collection,
    "Jobs_Get": get_job,
    "Jobs_CreateOrUpdate": put_job,
    "Jobs_Delete": delete_job,
    "Jobs_ListJobHistory": list_history,
}


def handle(operation: str, request: ApiRequest, rt: Runtime | None = None) -> ApiResponse:
    """Run the named operation; `rt` defaults to this process's runtime (tests pass their own)."""
    handler = OPERATIONS.get(operation)
    if handler is None:
        return run_operation(_unsupported(operation), request)
    return run_operation(lambda req: handler(rt or runtime(), req), request)


def _unsupported(operation: str) -> Callable[[ApiRequest], ApiResponse]:
    def reject(request: ApiRequest) -> ApiResponse:
        raise ApiError(405, "InvalidHttpVerb", f"{request.method} is not supported here yet ({operation}).")

    return reject


__all__ = ["OPERATIONS", "ApiRequest", "ApiResponse", "handle"]
