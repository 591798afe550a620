"""Request plumbing shared by every operation: api-version, JSON bodies, validation errors.

Contract: every function here either returns a usable value or raises an ApiError (400) whose
message names the offending query parameter or property path.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import ValidationError

from ..errors import ApiError, bad_request
from ..model import WireModel
from .http import ApiRequest

SUPPORTED_API_VERSIONS = ("2016-03-01", "2016-01-01", "2014-08-01-preview")
MAX_BODY_CHARS = 16_000  # "Maximum job size is 16K" (digest §3.1)

M = TypeVar("M", bound=WireModel)


def query_value(request: ApiRequest, name: str) -> str | None:
    lowered = name.lower()
    for key, value in request.query.items():
        if key.lower() == lowered:
            return value
    return None


def require_api_version(request: ApiRequest) -> None:
    version = query_value(request, "api-version")
    if version not in SUPPORTED_API_VERSIONS:
        raise ApiError(
            400, "MissingOrInvalidRequiredQueryParameter",
            f"The api-version query parameter is missing or not supported ('{version or ''}'); "
            f"supported versions: {', '.join(SUPPORTED_API_VERSIONS)}.",
        )


def error_path(loc: tuple[Any, ...]) -> str:
    """pydantic's ('properties', 'recurrence', 'schedule', 'hours', 2) -> properties.recurrence.schedule.hours[2]."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif str(part).startswith(("function-", "json-or-python", "lax-or-strict")):
            continue  # validator names pydantic puts in loc for unions and wrappers
        else:
            path += ("." if path else "") + str(part)
    return path


def read_json(request: ApiRequest, max_chars: int = MAX_BODY_CHARS) -> dict[str, Any]:
    """The request body as a JSON object; 400 for a body too large, not UTF-8, not JSON or not an object."""
    try:
        text = request.body.decode("utf-8") if request.body else ""
    except UnicodeDecodeError as exc:
        raise bad_request("The request body is not valid UTF-8.") from exc
    if len(text) > max_chars:
        raise bad_request(f"The request body is {len(text)} characters; the maximum job size is {max_chars}.")
    try:
        data = json.loads(text) if text.strip() else None
    except (ValueError, RecursionError) as exc:  # ValueError: JSONDecodeError, or an integer of over 4,300 digits
        where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise bad_request(f"The request body is not valid JSON{where}.") from exc
    if not isinstance(data, dict):
        raise bad_request("The request body must be a JSON object.")
    return data


def validate(model: type[M], data: dict[str, Any]) -> M:
    """Validate a decoded body; the first problem becomes a 400 naming its property path."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise bad_request(str(first["msg"]), error_path(tuple(first["loc"])) or None) from exc
    except RecursionError as exc:
        raise bad_request("The request body is nested too deeply.") from exc


def document_size(document: dict[str, Any]) -> int:
    """Characters of a definition as JSON: what the 16,000-character job size limit measures."""
    return len(json.dumps(document, separators=(",", ":")))
