"""What the 2016-03-01 history says of a dispatch step that covered missed occurrences: one Postponed note, and
how many the step let go (a metric). Pure; the ledger names each occurrence (ledger.py).

A step covers missed occurrences after an outage (missed.py) or at the end of a pause (pause.py): the note says
which, and for a pause, until when and its note.
"""

from __future__ import annotations

from datetime import datetime

from ..model import JobExecutionStatus, JobHistoryActionName, MissedRunType, format_utc
from ..records import HistoryRecord, JobRecord
from .plan import DispatchStep
from .series import series_of


def missed_count(job: JobRecord, step: DispatchStep) -> int:
    """How many occurrences an outage made the step skip (0 when it runs the one that was due): the missed ones
    the missed-run policy does not queue."""
    if step.missed_from is None:
        return 0
    series = series_of(job)
    missed = series.repeat_count(step.occurrence) - series.repeat_count(step.missed_from) + 1
    return max(0, missed - len(step.queued))


def postponed_note(job: JobRecord, step: DispatchStep, now: datetime) -> HistoryRecord | None:
    """The history note of the occurrences an outage skipped, or None when none were (the one entry 2016-03-01
    history shows for them; the ledger names each)."""
    first = step.missed_from
    if first is None:
        return None
    series = series_of(job)
    first_index = series.repeat_count(first)
    skipped = series.repeat_count(step.occurrence) - first_index
    caught = step.catch_up
    pause = job.properties.pause
    message = (
        f"{skipped} occurrence(s) from {first.isoformat()} were missed while the scheduler was unavailable "
        f"and skipped; the latest, {step.occurrence.isoformat()}, runs now."
    )
    if caught is not None and caught.policy != MissedRunType.LATEST:
        message = (
            f"{caught.let_go_count} occurrence(s) from {first.isoformat()} were missed while the scheduler was "
            f"unavailable and skipped (missed-run policy {caught.policy.value}); {len(caught.runs)} of them "
            f"run now."
        )
    if step.resume_at is not None and caught is not None and pause is not None:
        note = f" ({pause.note})" if pause.note else ""
        message = (
            f"{caught.let_go_count} occurrence(s) from {first.isoformat()} were held by the job's pause until "
            f"{format_utc(pause.until)}{note}; the missed-run policy {caught.policy.value} runs "
            f"{len(caught.runs)} of them now."
        )
    return HistoryRecord(
        key=job.key,
        execution_id=f"postponed|{first.isoformat()}",
        expected_execution_time=first,
        start_time=now,
        end_time=now,
        action_name=JobHistoryActionName.MAIN_ACTION,
        status=JobExecutionStatus.POSTPONED,
        message=message,
        retry_count=0,
        repeat_count=first_index,
    )
