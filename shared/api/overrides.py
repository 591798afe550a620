"""Per-request overrides of a job's policies for the occurrences one request queues (newer api-version only).

`?overlapPolicy=Allow|Skip|BufferOne` on POST .../run and POST .../backfill: the occurrences that request queues
follow this overlap policy instead of the job's
(docs/decisions.md, "Overlap, limits, long-running completion, spread").
A query parameter, not a body member, because run-now has no body (2016-03-01 clients send none) and both routes
should take it the same way. Nothing is stored on the job: the policy travels on the queued occurrences
(occurrence/message.py `OccurrenceMessage.overlap`). With another api-version it is a 400, never ignored: an ignored
override would run, or skip, what the caller asked otherwise.
"""

from __future__ import annotations

from ..errors import bad_request
from ..model import OverlapPolicy
from .common import query_value
from .http import ApiRequest
from .newer import require_newer

OVERLAP = "overlapPolicy"


def overlap_override(request: ApiRequest) -> OverlapPolicy | None:
    """The request's overlap policy override, or None; 400 naming `overlapPolicy` for a value that is not one."""
    text = query_value(request, OVERLAP)
    if text is None:
        return None
    require_newer(request, f"The query parameter {OVERLAP}")
    try:
        return OverlapPolicy(text.strip())
    except ValueError as exc:
        allowed = ", ".join(p.value for p in OverlapPolicy)
        raise bad_request(f"'{text[:40]!r}' is not an overlap policy; use one of {allowed}.", OVERLAP) from exc
