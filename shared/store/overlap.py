"""A job's overlap marker (which of its occurrences run and which one waits) on the job's own row, and the
read-modify-writes that change it.

Why on the job's row and not a row of its own: the executor reads the job before every attempt anyway and the
recorder writes it after every attempt (its counters, under its ETag, in transactions of up to 100 jobs of a
collection), so checking the marker costs nothing, and the release at an occurrence's end rides on the write
that ends it (`jobstate.ended` applied in the same change). Only the start of an occurrence of a job whose
policy is not Allow (or of one a Skip or BufferOne override queued) costs one more write of the job
(`OverlapMarkers.begin`); the other occurrences of Allow jobs (the default) keep no marker and pay nothing. A row
of its own would cost a read per attempt and a write per end for every job.

Stored as one compact JSON property of the job row, `Overlap` (overlap_codec.py).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ..jobstate.overlap import Begun, Ended, Turn, begun, ended, extended
from ..keys import JobKey
from ..records import JobRecord, OccurrenceRef
from .jobs import JobStore
from .tables import ConcurrencyError, read_modify_write

ATTEMPTS = 10


class OverlapMarkers:
    """The marker's changes under the job's ETag (the executor's, at an occurrence's first attempt and end)."""

    def __init__(self, jobs: JobStore) -> None:
        self.jobs = jobs

    def begin(
        self, key: JobKey, me: OccurrenceRef, now: datetime, until: datetime, current: JobRecord | None = None
    ) -> tuple[Begun, JobRecord | None]:
        """Decide for occurrence `me` at its first attempt and write the job's marker; (the decision, the job as
        written or read). (RUN, None) when the job is gone."""
        decided: list[Begun] = []

        def change(job: JobRecord) -> JobRecord | None:
            decision = begun(job, me, now, until)
            decided[:] = [decision]
            return decision.job

        job = self._write(key, change, current)
        return (decided[-1] if decided else Begun(Turn.RUN, None)), job

    def end(
        self, key: JobKey, execution_id: str, now: datetime, until: datetime, current: JobRecord | None = None
    ) -> tuple[Ended, JobRecord | None]:
        """Occurrence `execution_id` ended: the marker without it; `Ended.released` names the waiting occurrence
        that runs now (its caller queues it)."""
        decided: list[Ended] = []

        def change(job: JobRecord) -> JobRecord | None:
            decision = ended(job, execution_id, now, until)
            decided[:] = [decision]
            return decision.job

        job = self._write(key, change, current)
        return (decided[-1] if decided else Ended(None)), job

    def extend(self, key: JobKey, execution_id: str, until: datetime) -> JobRecord | None:
        """Hold the running occurrence's marker to `until` (a retry or a poll is queued for later)."""
        return self._write(key, lambda job: extended(job, execution_id, until), None)

    def _write(
        self, key: JobKey, change: Callable[[JobRecord], JobRecord | None], current: JobRecord | None
    ) -> JobRecord | None:
        try:
            return read_modify_write(
                lambda: self.jobs.get(key),
                change,
                lambda job, _: self.jobs.replace(job),
                attempts=ATTEMPTS,
                current=current,
            )
        except ConcurrencyError as exc:
            raise ConcurrencyError(f"job {key.resource_id} kept changing; its overlap marker was not written") from exc
