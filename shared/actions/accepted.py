"""What an asynchronous target's `202 Accepted` names, read with bounds: where to poll (Azure-AsyncOperation, else
Location) and when (Retry-After).

Nothing a target sends may fire its action again or leave the attempt unrecorded (docs/wire-contract.md §8), so
every value is read with a bound and a fallback, never trusted to fit:
- Retry-After: RFC 9110 delta-seconds (ASCII digits only: `²` or `١٢` are digits to Python, not to HTTP) or an
  HTTP-date; any other spelling counts as absent (the pollingInterval applies). A value past MAX_RETRY_AFTER
  reads as MAX_RETRY_AFTER, which the executor clamps further (PT1H, and never past the deadline).
- The address: at most MAX_LOCATION_BYTES of UTF-8, no control characters, an absolute http(s) URL (after
  resolving it against the URL it answered) with a host and a valid port. Any other raises `UnusableLocation`: the
  attempt then fails with its reason, recorded, since the work cannot be followed. The bound keeps a poll's queue
  message far under the queue's 64 KiB (JSON writes a non-ASCII character as at most three times its UTF-8 bytes).
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin, urlsplit

from .base import Accepted
from .outbound import Reply

MAX_LOCATION_BYTES = 8192  # the request line RFC 9112 asks servers to take, at least
MAX_RETRY_AFTER = 366 * 86400  # seconds: any longer wait reads as this (the executor clamps to PT1H anyway)
_HTTP_DATE_CHARS = 64  # an IMF-fixdate is 29; an obsolete spelling a little longer


class UnusableLocation(ValueError):
    """A 202 named an address the scheduler cannot poll; the message says why (no secret in it)."""


def accepted_work(base: str, reply: Reply) -> Accepted | None:
    """For an action with request.asyncCompletion: a `202 Accepted` naming where to poll (Azure-AsyncOperation,
    else Location, relative to `base`, the URL that answered) is accepted work; a 202 naming neither is a
    success as before. Raises UnusableLocation for an address that cannot be polled."""
    if reply.status != 202:
        return None
    found = {name.lower(): value for name, value in reply.headers}
    operation = (found.get("azure-asyncoperation") or "").strip()
    named = operation or (found.get("location") or "").strip()
    if not named:
        return None
    url = poll_url(base, named, "Azure-AsyncOperation" if operation else "Location")
    return Accepted(url, bool(operation), retry_after(found.get("retry-after")))


def poll_url(base: str, named: str, header: str) -> str:
    """The absolute http(s) URL `named` (a header's value) resolves to against `base`; UnusableLocation if none."""
    try:
        size = len(named.encode("utf-8"))
    except UnicodeEncodeError:  # bytes that were not UTF-8 on the wire (kept as surrogate escapes)
        raise UnusableLocation(f"its {header} is not a valid URL") from None
    if size > MAX_LOCATION_BYTES:
        raise UnusableLocation(f"its {header} is {size} bytes long, more than the {MAX_LOCATION_BYTES} polled")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in named):
        raise UnusableLocation(f"its {header} holds control characters")
    try:
        url = urljoin(base, named)
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a port out of range or not a number
    except ValueError:
        raise UnusableLocation(f"its {header} is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise UnusableLocation(f"its {header} is not an http(s) URL")
    if len(url.encode("utf-8")) > MAX_LOCATION_BYTES:  # a relative one resolved against a long base
        raise UnusableLocation(f"its {header} resolves to more than the {MAX_LOCATION_BYTES} bytes polled")
    return url


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After in seconds, from 0 to MAX_RETRY_AFTER: delta-seconds or an HTTP-date (RFC 9110 10.2.3, relative
    to `now`, default the current time); None when absent or unreadable."""
    value = (value or "").strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():
        digits = value.lstrip("0")
        # Compared as text first: int() of many thousand digits raises (Python's conversion limit).
        if len(digits) > len(str(MAX_RETRY_AFTER)):
            return float(MAX_RETRY_AFTER)
        return float(min(int(digits or "0"), MAX_RETRY_AFTER))
    if len(value) > _HTTP_DATE_CHARS:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": no zone at all, not the GMT an HTTP-date is in
        return None
    seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return min(max(seconds, 0.0), float(MAX_RETRY_AFTER))
