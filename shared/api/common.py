"""Request plumbing shared by every operation: api-version, query parameters, JSON bodies.

Contract: every function here either returns a usable value or raises an ApiError (400) whose
message names the offending query parameter or property path.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..errors import ApiError, bad_request
from ..lifecycle.documents import MAX_DEFINITION_BYTES
from ..model.versions import VERSIONS, ApiVersion, api_version
from .http import ApiRequest

SUPPORTED_API_VERSIONS = tuple(VERSIONS)  # what each one shows: shared/model/versions.py
MAX_BODY_CHARS = MAX_DEFINITION_BYTES  # "Maximum job size is 16K": bytes of the body, as of the definition stored


def query_value(request: ApiRequest, name: str) -> str | None:
    """The value of the query parameter `name`, in any case spelling; 400 when two spellings are given."""
    lowered = name.lower()
    found = [value for key, value in request.query.items() if key.lower() == lowered]
    if len(found) > 1:
        raise _repeated(name)
    return found[0] if found else None


def refuse_repeated_query(request: ApiRequest) -> None:
    """400 DuplicateQueryParameter when the query names a parameter twice, in any case spelling.

    Which of two values applies is a guess (`WhatIf=false&whatIf=true` must not be read as a write), so neither
    does. The raw query of the URL is read too: the Functions host joins exact repeats into one value with ","
    (`request.query` then shows one), and a URL as sent is the only place both still show.
    """
    names = [name for name, _ in parse_qsl(urlsplit(request.url).query, keep_blank_values=True)]
    for group in (names, list(request.query)):
        seen: set[str] = set()
        for name in (n.lower() for n in group if n):
            if name in seen:
                raise _repeated(name)
            seen.add(name)


def _repeated(name: str) -> ApiError:
    # The name is the client's own text: quoted with repr and cut short, so no control character reaches a log.
    return ApiError(
        400,
        "DuplicateQueryParameter",
        f"The query parameter {name[:100]!r} is given more than once (names ignore case); give it once.",
    )


def require_api_version(request: ApiRequest) -> ApiVersion:
    """The request's api-version; 400 when it is missing or not one of ours."""
    version = query_value(request, "api-version")
    found = api_version(version)
    if found is None:
        raise ApiError(
            400,
            "MissingOrInvalidRequiredQueryParameter",
            f"The api-version query parameter is missing or not supported ('{version or ''}'); "
            f"supported versions: {', '.join(SUPPORTED_API_VERSIONS)}.",
        )
    return found


def _media_type(request: ApiRequest) -> str:
    for name, value in request.headers.items():
        if name.lower() == "content-type":
            return value.split(";", 1)[0].strip().lower()
    return ""


def _is_json(media_type: str) -> bool:
    return media_type == "application/json" or (media_type.startswith("application/") and media_type.endswith("+json"))


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json.loads keeps the last of duplicate keys silently; ARM refuses such a body, so do we."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKey(key)
        result[key] = value
    return result


class DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def read_json(request: ApiRequest, max_bytes: int = MAX_BODY_CHARS) -> dict[str, Any]:
    """The request body as a JSON object.

    415 when a body comes with a Content-Type other than JSON (ARM's UnsupportedMediaType; a body without
    a Content-Type is read as JSON, as every ARM client labels its bodies); 400 for a
    body larger than `max_bytes` (UTF-8 bytes, as sent), not UTF-8, not JSON, not an object, or
    holding a key twice in one object.
    """
    media_type = _media_type(request)
    if request.body and media_type and not _is_json(media_type):
        raise ApiError(
            415,
            "UnsupportedMediaType",
            "The content media type is not supported. Only 'application/json' is supported.",
        )
    if len(request.body) > max_bytes:
        raise bad_request(f"The request body is {len(request.body)} bytes; the maximum job size is {max_bytes}.")
    try:
        text = request.body.decode("utf-8") if request.body else ""
    except UnicodeDecodeError as exc:
        raise bad_request("The request body is not valid UTF-8.") from exc
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates) if text.strip() else None
    except DuplicateKey as exc:
        # The key is the client's own text: quoted with repr, so no control character reaches a log verbatim.
        raise bad_request(f"The request body holds the member {exc.key[:100]!r} twice in one object.") from exc
    except (ValueError, RecursionError) as exc:  # ValueError: JSONDecodeError, or an integer of over 4,300 digits
        where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise bad_request(f"The request body is not valid JSON{where}.") from exc
    if not isinstance(data, dict):
        raise bad_request("The request body must be a JSON object.")
    return data
