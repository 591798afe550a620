"""A request's write done again when it lost a race for its row.

The executor's counters, the dispatcher's advance and a create's place in its collection's count change a job's or
a collection's row under a PUT or PATCH that read it a moment before. The client sent no ETag of its own (the API
takes no If-Match, as the old service took none), so the old service answered such a write as a success: the whole
request (read, decide, store) is done again on the fresh row. A request is told Conflict only when the row kept
changing through every attempt.

Not `store/tables.py` `read_modify_write`, the app's one ETag loop over one row: a request reads two rows, may write
three (the due entry, the count, the job) and decides through the whole lifecycle pipeline, so what is done again
here is the request, whose row writes each stay under their own ETag.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..store import ConcurrencyError
from ..store.tables import backoff
from .errors import Conflict

R = TypeVar("R")

# Enough for a job that fires every second beside the request, or a herd of creates in its collection.
WRITE_ATTEMPTS = 8
RACE_STEP_SECONDS = 0.02


def again_on_race(write: Callable[[], R], what: str) -> R:
    """`write()`, done again after each ConcurrencyError, at most WRITE_ATTEMPTS times; then Conflict naming
    `what` ("job", "job collection")."""
    pause = backoff(RACE_STEP_SECONDS)
    for attempt in range(WRITE_ATTEMPTS):
        try:
            return write()
        except ConcurrencyError:
            if attempt + 1 < WRITE_ATTEMPTS:
                pause(attempt)
    raise Conflict(f"The {what} was changed by another request; retry.")
