"""List paging: `$top` (a cap, 1-100), `$skip` (start offset), `$skiptoken` (our continuation), nextLink.

Contract (docs/decisions.md, "Wire contract"): `$top` caps the result and `$skip` offsets it, as the
recorded service did (history `$top=5` of 135 entries answered 5 entries and `"nextLink": null`); with
`$top` there is no nextLink, so a client that follows nextLink (the SDK pagers do) still gets `$top` items.
Without `$top` a long list is paged, 100 items a page, and nextLink continues it: the link is absolute,
keeps the request's api-version and `$filter`, and replaces `$skip` with an opaque `$skiptoken`, so later
pages resume where the previous one ended instead of skipping rows again.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from ..errors import bad_request
from .common import query_value
from .http import ApiRequest

MAX_PAGE = 100
_DIGITS = re.compile(r"^[0-9]{1,9}$")  # ASCII only: str.isdigit() also takes '²'


@dataclass(frozen=True)
class PageRequest:
    size: int
    skip: int
    token: dict[str, Any] | None  # the decoded $skiptoken of a nextLink, None on a first page


def _non_negative_int(request: ApiRequest, name: str) -> int | None:
    text = query_value(request, name)
    if text is None:
        return None
    if not _DIGITS.match(text.strip()):
        raise bad_request(f"{name} must be a non-negative integer.", name)
    return int(text.strip())


def page_request(request: ApiRequest) -> PageRequest:
    """Validate $top, $skip and $skiptoken; 400 naming the parameter otherwise."""
    top = _non_negative_int(request, "$top")
    if top is not None and not 1 <= top <= MAX_PAGE:
        raise bad_request(f"$top must be an integer from 1 to {MAX_PAGE}.", "$top")
    skip = _non_negative_int(request, "$skip") or 0
    token: dict[str, Any] | None = None
    text = query_value(request, "$skiptoken")
    if text:
        try:
            token = json.loads(base64.urlsafe_b64decode(text.encode("ascii") + b"==="))
        except (ValueError, UnicodeError) as exc:
            raise bad_request("$skiptoken is not a token this service issued.", "$skiptoken") from exc
        if not isinstance(token, dict):
            raise bad_request("$skiptoken is not a token this service issued.", "$skiptoken")
    return PageRequest(size=top or MAX_PAGE, skip=skip, token=token)


def token_text(token: dict[str, Any], name: str) -> str | None:
    """A string member of a decoded token; 400 when a forged token holds something else."""
    value = token.get(name)
    if value is not None and not isinstance(value, str):
        raise bad_request("$skiptoken is not a token this service issued.", "$skiptoken")
    return value


def next_link(request: ApiRequest, token: dict[str, Any] | None) -> str | None:
    """Absolute URL of the next page, or None when this page is the last or `$top` capped the list."""
    if token is None or query_value(request, "$top") is not None:
        return None
    encoded = base64.urlsafe_b64encode(json.dumps(token, separators=(",", ":")).encode()).decode("ascii").rstrip("=")
    kept = [(k, v) for k, v in request.query.items() if k.lower() not in {"$skiptoken", "$skip"}]
    kept.append(("$skiptoken", encoded))
    # `$` stays literal and spaces become %20, as ARM clients write these parameters themselves.
    query = "&".join(f"{quote(k, safe='$')}={quote(v, safe='')}" for k, v in kept)
    parts = urlsplit(request.url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def list_body(values: list[Any], link: str | None) -> dict[str, Any]:
    """The `{value, nextLink}` envelope; nextLink is present and null on the last page, like the service."""
    return {"value": values, "nextLink": link}
