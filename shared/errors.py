"""ARM-style API errors: `{"error": {"code", "message"}}` with an HTTP status. Never a stack trace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ApiError(Exception):
    """A request the API rejects; carries the HTTP status, the ARM error code and a readable message."""

    def __init__(self, status: int, code: str, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})  # e.g. WWW-Authenticate on a 401

    def to_wire(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


def bad_request(message: str, path: str | None = None) -> ApiError:
    """400 BadRequest; `path` is the offending property, e.g. `properties.recurrence.schedule.hours[2]`."""
    return ApiError(400, "BadRequest", f"{path}: {message}" if path else message)
