"""The message of an occurrence that waited for the previous one of its job (overlapPolicy BufferOne) and was let
go by that one's end (`jobstate.Ended.released`): whoever wrote the end queues it at once (recorder.py, and
not_run.py for an occurrence dropped as superseded)."""

from __future__ import annotations

from datetime import datetime

from ..keys import JobKey
from ..model import WaitCause
from ..occurrence import OccurrenceMessage, Trigger
from ..records import JobRecord, OccurrenceRef


def released_message(key: JobKey, ref: OccurrenceRef, since: datetime | None, now: datetime) -> OccurrenceMessage:
    """Due now, with its own identity and override; `since`: when it began to wait (its `waited` counts from it)."""
    return OccurrenceMessage(
        job=key,
        occurrence=ref.occurrence,
        due=now,
        trigger=Trigger(ref.trigger),
        generation=ref.generation,
        overlap=ref.overlap,
        first_due=since,
        waited_for=WaitCause.PREVIOUS if since is not None else None,
    )


def waiting_since(job: JobRecord) -> datetime | None:
    """When the occurrence `job`'s marker holds back started waiting (before an end promotes it)."""
    return job.overlap.waiting.since if job.overlap.waiting is not None else None
