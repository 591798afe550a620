"""`persist`: a write after an action has run, waited out through storage faults rather than given up.

Giving up would hand the attempt back and run its action again, so every write that follows an action (its
history, its follow-up, its job's status, a poll's next message, the claim's completion) goes through here:
retried on transient storage faults for up to the timings' `record_patience`, the first retry after
`record_retry_first`, each next one twice as late, up to `record_retry_max`, all on the runtime's clock. Any other
error, or a fault outlasting the patience, goes to the caller. Blocking (it sleeps between tries): run it off the
event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError

from ..clock import Clock
from ..timings import Timings

log = logging.getLogger(__name__)

TRANSIENT = {408, 429, 500, 502, 503, 504}  # storage answers worth retrying


def persist(clock: Clock, timings: Timings, step: Callable[[], object], what: str) -> None:
    """Run `step` (a write after an action), retrying storage faults as the module says; `what` names it in the log.

    Every such write is idempotent (history rows are keyed by attempt, a follow-up's duplicate dies at its claim,
    the job update checks recent_claims), so repeating one whose answer was lost is harmless."""
    deadline = clock.monotonic() + timings.record_patience.total_seconds()
    delay, most = timings.record_retry_first.total_seconds(), timings.record_retry_max.total_seconds()
    while True:
        try:
            step()
            return
        except (ServiceRequestError, ServiceResponseError, HttpResponseError) as error:
            transient = not isinstance(error, HttpResponseError) or (error.status_code or 0) in TRANSIENT
            if not transient or clock.monotonic() > deadline:
                raise
            log.warning("recording %s failed (%s); retrying", what, type(error).__name__)
            clock.sleep(delay)
            delay = min(delay * 2, most)
