"""Framework-neutral HTTP request/response, and the wrapper that turns every failure into an ARM error
(the lifecycle's refusals included: `_ARM_ERRORS`).

`function_app.py` translates `func.HttpRequest` into `ApiRequest` and `ApiResponse` back, so nothing
in `shared/` imports azure.functions and the API is testable without a host.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from azure.core.exceptions import AzureError

from ..auth.assignments import AssignmentError, AssignmentExists, AssignmentNotFound, AssignmentUpdateNotPermitted
from ..errors import ApiError
from ..lifecycle.errors import (
    CollectionNotFound,
    Conflict,
    InvalidDefinition,
    JobNotFound,
    LifecycleError,
    QuotaExceeded,
)
from ..store.failures import passing
from ..store.readable import UnreadableEntity

log = logging.getLogger(__name__)

# Seconds an ARM client is told to wait when storage is unreachable: the storage clients give up within
# a few seconds, and outages worth a 503 last seconds to minutes.
STORAGE_RETRY_AFTER = 5

# The lifecycle's and the role assignments' refusals as ARM errors: the one place a domain error gets an
# HTTP status (role assignments with the codes ARM's roleAssignments answer).
DomainError = LifecycleError | AssignmentError
_ARM_ERRORS: tuple[tuple[type[DomainError], int, str], ...] = (
    (InvalidDefinition, 400, "BadRequest"),
    (JobNotFound, 404, "NotFound"),  # the service's own code; a missing collection is ARM's ResourceNotFound
    (CollectionNotFound, 404, "ResourceNotFound"),
    (QuotaExceeded, 409, "Conflict"),
    (Conflict, 409, "Conflict"),
    (AssignmentNotFound, 404, "RoleAssignmentNotFound"),
    (AssignmentUpdateNotPermitted, 409, "RoleAssignmentUpdateNotPermitted"),
    (AssignmentExists, 409, "RoleAssignmentExists"),
)


@dataclass(frozen=True)
class ApiRequest:
    method: str
    url: str  # the absolute URL as the client sent it (nextLink is built from it)
    route: Mapping[str, str]
    query: Mapping[str, str]
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    caller: str | None = None  # the authenticated caller's object id (shared/auth), when the app checks callers
    # A filtered list's cut (shared/auth): the scopes whose items the caller may read; None: every item.
    readable: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ApiResponse:
    status: int
    body: Any = None  # a JSON-able value, or None for an empty body
    headers: Mapping[str, str] = field(default_factory=dict)

    def encoded(self) -> bytes:
        return b"" if self.body is None else json.dumps(self.body, separators=(",", ":")).encode("utf-8")


def _common_headers() -> dict[str, str]:
    return {"x-ms-request-id": str(uuid.uuid4()), "Cache-Control": "no-cache", "Pragma": "no-cache", "Expires": "-1"}


def run_operation(
    operation: Callable[[ApiRequest], ApiResponse], request: ApiRequest, name: str = "an operation"
) -> ApiResponse:
    """Run one API operation; ApiError becomes its ARM error, a passing storage fault (store/failures.py) a 503 with
    Retry-After, anything else a bare 500 (logged, no trace out).

    The log names the operation (`name`, ours), never the URL or any other raw input: a client's bytes
    (line breaks included) must not reach the service log.
    """
    try:
        response = operation(request)
    except ApiError as error:
        response = ApiResponse(error.status, error.to_wire(), error.headers)
    except (LifecycleError, AssignmentError) as error:
        response = arm_error(error)
    except UnreadableEntity as error:  # logged with its keys; the client learns which resource and what to do
        log.error("%s: %s", name, error)
        response = ApiResponse(
            409,
            {
                "error": {
                    "code": "StoredResourceUnreadable",
                    "message": (
                        f"The stored {error.kind} cannot be read (it was written in a form this version does not "
                        "accept); delete it and create it again."
                    ),
                }
            },
        )
    except Exception as error:  # the boundary: never leak a stack trace to the client
        if passing(error):  # storage unreachable, its answer lost or cut, busy, or a race: the client retries
            response = _storage_unavailable(name, error)
        else:
            log.exception("unhandled %s in %s", "storage error" if isinstance(error, AzureError) else "error", name)
            response = _internal_error()
    return ApiResponse(response.status, response.body, {**_common_headers(), **response.headers})


def arm_error(error: DomainError) -> ApiResponse:
    for kind, status, code in _ARM_ERRORS:
        if isinstance(error, kind):
            return ApiResponse(status, {"error": {"code": code, "message": error.message}})
    log.error("no ARM error for the refusal %s", type(error).__name__)  # a kind added without its mapping
    return _internal_error()


def _internal_error() -> ApiResponse:
    return ApiResponse(
        500, {"error": {"code": "InternalError", "message": "The server encountered an internal error. Please retry."}}
    )


def _storage_unavailable(name: str, error: Exception) -> ApiResponse:
    """503 with Retry-After, as ARM answers a dependency outage (ARM clients retry it). Logged by the error's
    type alone: its text may quote keys, which hold the caller's names."""
    log.warning("storage unavailable in %s: %s", name, type(error).__name__)
    return ApiResponse(
        503,
        {
            "error": {
                "code": "ServiceUnavailable",
                "message": (
                    "The service's storage is temporarily unavailable. Please retry after the interval in Retry-After."
                ),
            }
        },
        {"Retry-After": str(STORAGE_RETRY_AFTER)},
    )
