"""List paging: `$top` (a cap, 1-100), `$skip` (start offset), `$skiptoken` (our continuation), nextLink.

Contract (docs/decisions.md, "Wire contract"): `$top` caps the result and `$skip` offsets it, as the
recorded service did (history `$top=5` of 135 entries answered 5 entries and `"nextLink": null`); with
`$top` there is no nextLink, so a client that follows nextLink (the SDK pagers do) still gets `$top` items.
Without `$top` a long list is paged, 100 items a page, and nextLink continues it: the link is absolute,
keeps the request's api-version and `$filter`, and replaces `$skip` with an opaque `$skiptoken`, so later
pages resume where the previous one ended instead of skipping rows again. The token is sealed
(continuation.py): opaque, authenticated, bound to the list, its filter and the caller's access; a token that
does not open is a 400, never a silent restart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit, urlunsplit

from ..errors import bad_request
from . import continuation
from .common import query_value
from .http import ApiRequest

if TYPE_CHECKING:
    from ..runtime import Runtime

MAX_PAGE = 100
_DIGITS = re.compile(r"^[0-9]{1,9}$")  # ASCII only: str.isdigit() also takes '²'


@dataclass(frozen=True)
class PageRequest:
    size: int
    skip: int
    token: str | None  # the $skiptoken of a nextLink (still sealed), None on a first page


def _non_negative_int(request: ApiRequest, name: str) -> int | None:
    text = query_value(request, name)
    if text is None:
        return None
    if not _DIGITS.match(text.strip()):
        raise bad_request(f"{name} must be a non-negative integer.", name)
    return int(text.strip())


def page_request(request: ApiRequest) -> PageRequest:
    """Validate $top and $skip; 400 naming the parameter otherwise. The $skiptoken is opened by `resume`."""
    top = _non_negative_int(request, "$top")
    if top is not None and not 1 <= top <= MAX_PAGE:
        raise bad_request(f"$top must be an integer from 1 to {MAX_PAGE}.", "$top")
    skip = _non_negative_int(request, "$skip") or 0
    return PageRequest(size=top or MAX_PAGE, skip=skip, token=skiptoken(request))


def skiptoken(request: ApiRequest) -> str | None:
    """The request's $skiptoken, None without one; 400 when it is there but empty (a token cut to nothing is
    refused like any other altered token, never read as a first page)."""
    text = query_value(request, "$skiptoken")
    if text is not None and not text.strip():
        raise bad_request(
            "The continuation token is empty; list again from the start, without $skiptoken.", "$skiptoken"
        )
    return text


def _binding(request: ApiRequest, kind: str, query: str) -> bytes:
    return continuation.binding(kind, request.route, query, request.caller, request.readable)


def resume(rt: Runtime, request: ApiRequest, page: PageRequest, kind: str, query: str = "") -> Any:
    """Where this page starts: the position sealed in the request's $skiptoken for this list (`kind`, with
    its filter in canonical form as `query`), or None on a first page; 400 for a token that does not open."""
    if page.token is None:
        return None
    return continuation.unseal(rt.settings, rt.clock.now(), _binding(request, kind, query), page.token)


def resume_text(rt: Runtime, request: ApiRequest, page: PageRequest, kind: str, query: str = "") -> str | None:
    """`resume` for lists whose position is a row key."""
    position = resume(rt, request, page, kind, query)
    if position is not None and not isinstance(position, str):
        raise bad_request("The continuation token is not one of this list's.", "$skiptoken")
    return position


def next_link(rt: Runtime, request: ApiRequest, kind: str, position: Any, query: str = "") -> str | None:
    """Absolute URL of the next page (starting at `position`), or None when this page is the last or `$top`
    capped the list."""
    if position is None or query_value(request, "$top") is not None:
        return None
    return continuation_link(rt, request, kind, position, query)


def continuation_link(rt: Runtime, request: ApiRequest, kind: str, position: Any, query: str = "") -> str:
    """Absolute URL of the page starting at `position`, for a list that takes no `$top`."""
    token = continuation.seal(rt.settings, rt.clock.now(), _binding(request, kind, query), position)
    kept = [(k, v) for k, v in request.query.items() if k.lower() not in {"$skiptoken", "$skip"}]
    kept.append(("$skiptoken", token))
    # `$` stays literal and spaces become %20, as ARM clients write these parameters themselves.
    encoded = "&".join(f"{quote(k, safe='$')}={quote(v, safe='')}" for k, v in kept)
    parts = urlsplit(request.url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, encoded, ""))


def list_body(values: list[Any], link: str | None) -> dict[str, Any]:
    """The `{value, nextLink}` envelope; nextLink is present and null on the last page, like the service."""
    return {"value": values, "nextLink": link}
