"""A job's overlap marker changed under the job's ETag: jobstate decides (`begun`, `ended`, `extended`), the job
store reads and writes (the marker rides on the job's row: store/overlap.py), and `read_modify_write` joins them,
deciding again on a fresh read when another writer changed the job in between (up to ATTEMPTS writes, re-read at
once: a job's row sees few racing writers).

Callers: admission.py (an occurrence's first attempt, named by `ref_of`), not_run.py (a superseded occurrence's
end), polling.py (held past each next poll). The end of an occurrence that ran rides on the recorder's write instead.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ..jobstate.overlap import Begun, Ended, Turn, begun, ended, extended
from ..keys import JobKey
from ..occurrence import OccurrenceMessage
from ..records import JobRecord, OccurrenceRef
from ..store import ConcurrencyError, JobStore, read_modify_write

ATTEMPTS = 10


def ref_of(message: OccurrenceMessage) -> OccurrenceRef:
    """The occurrence a message starts, as the marker names it (its identity and override)."""
    return OccurrenceRef(
        message.execution_id, message.occurrence, message.trigger.value, message.generation, message.overlap
    )


def begin(
    jobs: JobStore, key: JobKey, me: OccurrenceRef, now: datetime, until: datetime, current: JobRecord | None = None
) -> tuple[Begun, JobRecord | None]:
    """Decide for occurrence `me` at its first attempt and write the job's marker; (the decision, the job as
    written or read). (RUN, None) when the job is gone."""
    decided: list[Begun] = []

    def change(job: JobRecord) -> JobRecord | None:
        decided[:] = [begun(job, me, now, until)]  # the last decision is the one written
        return decided[0].job

    job = _write(jobs, key, change, current)
    return (decided[0] if decided else Begun(Turn.RUN, None)), job


def end(
    jobs: JobStore, key: JobKey, execution_id: str, now: datetime, until: datetime, current: JobRecord | None = None
) -> tuple[Ended, JobRecord | None]:
    """Occurrence `execution_id` ended: the marker without it; `Ended.released` names the waiting occurrence that
    runs now (its caller queues it)."""
    decided: list[Ended] = []

    def change(job: JobRecord) -> JobRecord | None:
        decided[:] = [ended(job, execution_id, now, until)]
        return decided[0].job

    job = _write(jobs, key, change, current)
    return (decided[0] if decided else Ended(None)), job


def extend(jobs: JobStore, key: JobKey, execution_id: str, until: datetime) -> JobRecord | None:
    """Hold the running occurrence's marker to `until` (a retry or a poll is queued for later)."""
    return _write(jobs, key, lambda job: extended(job, execution_id, until), None)


def _write(
    jobs: JobStore, key: JobKey, change: Callable[[JobRecord], JobRecord | None], current: JobRecord | None
) -> JobRecord | None:
    try:
        return read_modify_write(
            lambda: jobs.get(key), change, lambda job, _: jobs.replace(job), attempts=ATTEMPTS, current=current
        )
    except ConcurrencyError as exc:
        raise ConcurrencyError(f"job {key.resource_id} kept changing; its overlap marker was not written") from exc
