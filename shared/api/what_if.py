"""What-if (newer api-version): a write asked as a dry run is answered without being carried out, or refused.

A request asks for a what-if with the query parameter `whatIf=true` (the name in any case spelling, given once:
common.refuse_repeated_query) or the header `x-ms-what-if: true`; another value of either is a 400.
`refuse_unapplied_what_if` runs before every write's handler (api.handle), so no write can ignore the flag:
- an api-version without what-if (2016-03-01) refuses it on every write, 400 naming the version (newer.py);
- a write that implements it (the operation table's `what_if`) validates exactly as the write would, answers what
  the write would do and writes, queues and calls nothing: job PUT and PATCH (occurrences.py), job DELETE and
  backfill (jobs.py, backfill.py), collection PUT and PATCH (collections.py);
- every other write is refused, 400 `WhatIfNotSupported` naming the operation: run now, collection DELETE,
  enable and disable (their effects are queued cascades and calls to targets), a dead letter's replay and purge,
  and role assignments (ARM's Microsoft.Authorization has no what-if on them either).
Reads (GET) are dry by nature and left alone.
"""

from __future__ import annotations

from ..errors import ApiError, bad_request
from .common import query_value, require_api_version
from .http import ApiRequest
from .newer import require_newer

WHAT_IF_HEADER = "x-ms-what-if"
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


def what_if_asked(request: ApiRequest) -> bool:
    """`whatIf=true` or `x-ms-what-if: true` (values ignore case); 400 for a value other than true or false."""
    values = [query_value(request, "whatIf")]
    values += [v for k, v in request.headers.items() if k.lower() == WHAT_IF_HEADER]
    given = [v.strip().lower() for v in values if v is not None]
    if any(v not in ("true", "false") for v in given):
        raise bad_request("whatIf must be true or false.", "whatIf")
    return "true" in given


def wants_what_if(request: ApiRequest) -> bool:
    """The request asks for a what-if; 400 for an api-version without what-if (a write must never happen because
    the flag was not understood)."""
    if not what_if_asked(request):
        return False
    require_newer(request, "whatIf")
    return True


def refuse_unapplied_what_if(operation: str, request: ApiRequest, implemented: bool) -> None:
    """Before a write's handler: nothing when no what-if is asked or the operation `implemented` it (its handler
    answers the dry run); otherwise the 400 that stops the write."""
    if request.method.upper() in _READS or not what_if_asked(request):
        return
    if not operation.startswith("RoleAssignments_"):  # those take Microsoft.Authorization's api-versions
        require_api_version(request)
        require_newer(request, "whatIf")
    if not implemented:
        raise ApiError(
            400,
            "WhatIfNotSupported",
            f"{operation} does not support what-if (whatIf=true or x-ms-what-if: true); nothing was done. "
            "Send the request without it to carry it out.",
        )
