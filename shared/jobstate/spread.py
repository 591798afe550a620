"""Predictable spread: each occurrence of a job with a `spreadWindow` fires at a fixed offset after its nominal
time, derived from the job's identity alone. Pure.

Rules (docs/decisions.md, "Overlap, limits, long-running completion, spread"):
- the offset is a whole number of seconds in [0, window): never before the nominal time, always before the
  window ends (validation keeps the window within PT1S..PT1H and the job's shortest interval);
- it is the same for every occurrence of the job, on every instance and across restarts and releases: a
  SHA-256 of the job's resource id, case-folded as ARM compares names, so
  "the same job always lands at the same offset", and a herd of identical schedules is spread evenly over the
  window (the hash is uniform), not at random on each run as a jitter would be;
- only the fire instant moves: the occurrence's identity (execution id, `occurrenceTime`, repeat count, the
  `expectedExecutionTime` header) stays its nominal time. Lateness, missed runs and the executor's wait are
  measured from the fire instant (plan.py `DispatchStep.due_of`, which the dispatcher queues the message at);
- an occurrence in the window's reach of the calendar's end fires no later than its last second,
  9999-12-31T23:59:59Z (`fires_at`): nothing is ever due after it.
A run-now or backfill occurrence is not spread: it runs when asked (its due is chosen by its request).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from ..keys import JobKey, fold_case
from ..records import JobRecord

ZERO = timedelta(0)
CALENDAR_END = datetime.max.replace(microsecond=0, tzinfo=UTC)  # the last second an occurrence can have


def spread_offset(job: JobKey, window: timedelta | None) -> timedelta:
    """The job's offset inside `window`: whole seconds, at least 0 and less than the window (0 without one)."""
    seconds = int(window.total_seconds()) if window is not None else 0
    if seconds <= 1:
        return ZERO
    digest = hashlib.sha256(fold_case(job.resource_id).encode("utf-8")).digest()
    return timedelta(seconds=int.from_bytes(digest[:8], "big") % seconds)


def offset_of(job: JobRecord) -> timedelta:
    """The offset of the job's scheduled occurrences (its `spreadWindow`; 0 without one)."""
    return spread_offset(job.key, job.properties.spread_window)


def fires_at(occurrence: datetime, offset: timedelta) -> datetime:
    """`offset` after `occurrence`, but no later than the calendar's last second."""
    return occurrence + offset if occurrence <= CALENDAR_END - offset else max(occurrence, CALENDAR_END)


def fire_instant(job: JobKey, occurrence: datetime, window: timedelta | None) -> datetime:
    """When the nominal `occurrence` fires: at its job's offset after it."""
    return fires_at(occurrence, spread_offset(job, window))
