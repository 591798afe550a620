"""Framework-neutral HTTP request/response, and the wrapper that turns every failure into an ARM error.

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

from ..errors import ApiError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ApiRequest:
    method: str
    url: str  # the absolute URL as the client sent it (nextLink is built from it)
    route: Mapping[str, str]
    query: Mapping[str, str]
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ApiResponse:
    status: int
    body: Any = None  # a JSON-able value, or None for an empty body
    headers: Mapping[str, str] = field(default_factory=dict)

    def encoded(self) -> bytes:
        return b"" if self.body is None else json.dumps(self.body, separators=(",", ":")).encode("utf-8")


def _common_headers() -> dict[str, str]:
    return {"x-ms-request-id": str(uuid.uuid4()), "Cache-Control": "no-cache", "Pragma": "no-cache", "Expires": "-1"}


def run_operation(operation: Callable[[ApiRequest], ApiResponse], request: ApiRequest,
                  name: str = "an operation") -> ApiResponse:
    """Run one API operation; ApiError becomes its ARM error, anything else a bare 500 (logged, no trace out).

    The log names the operation (`name`, ours), never the URL or any other raw input: a client's bytes
    (line breaks included) must not reach the service log.
    """
    try:
        response = operation(request)
    except ApiError as error:
        response = ApiResponse(error.status, error.to_wire())
    except Exception:  # noqa: BLE001 - the boundary: never leak a stack trace to the client
        log.exception("unhandled error in %s", name)
        response = ApiResponse(500, {"error": {"code": "InternalError",
                                               "message": "The server encountered an internal error. Please retry."}})
    return ApiResponse(response.status, response.body, {**_common_headers(), **response.headers})
