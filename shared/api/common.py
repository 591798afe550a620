"""Request plumbing shared by every operation: api-version, JSON bodies, validation errors, paging."""

from __future__ import annotations

import base64
import json
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit, urlunsplit

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


def parse_body(request: ApiRequest, model: type[M]) -> M:
    """Decode and validate a JSON body; every rejection names the offending property path."""
    try:
        text = request.body.decode("utf-8") if request.body else ""
    except UnicodeDecodeError as exc:
        raise bad_request("The request body is not valid UTF-8.") from exc
    if len(text) > MAX_BODY_CHARS:
        raise bad_request(f"The request body is {len(text)} characters; the maximum job size is {MAX_BODY_CHARS}.")
    try:
        data = json.loads(text) if text.strip() else None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise bad_request(f"The request body is not valid JSON: {exc.msg} at {where}.") from exc
    if not isinstance(data, dict):
        raise bad_request("The request body must be a JSON object.")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise bad_request(str(first["msg"]), error_path(tuple(first["loc"])) or None) from exc


def page_size(request: ApiRequest, default: int = 100) -> int:
    top = query_value(request, "$top")
    if top is None:
        return default
    if not top.isdigit() or not 1 <= int(top) <= 100:
        raise bad_request("$top must be an integer from 1 to 100.", "$top")
    return int(top)


def continuation(request: ApiRequest) -> Any:
    token = query_value(request, "$skiptoken")
    if not token:
        return None
    try:
        return json.loads(base64.urlsafe_b64decode(token.encode("ascii")))
    except (ValueError, UnicodeError) as exc:
        raise bad_request("$skiptoken is not a token this service issued.", "$skiptoken") from exc


def next_link(request: ApiRequest, token: Any) -> str | None:
    """Absolute nextLink carrying api-version, $filter and $top of the request, plus the continuation."""
    if token is None:
        return None
    encoded = base64.urlsafe_b64encode(json.dumps(token, separators=(",", ":")).encode()).decode("ascii")
    kept = {k: v for k, v in request.query.items() if k.lower() not in {"$skiptoken", "$skip"}}
    parts = urlsplit(request.url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode({**kept, "$skiptoken": encoded}), ""))
