"""Which due entries that are not their job's own may yet become so (jobstate.awaits_its_write): every writer adds
the entry before the job it is for, so a dispatch reading between the two must leave the entry, and only the
entry, for the write to land; a table of the cases."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared import jobstate
from shared.keys import JobKey
from shared.model import JobProperties
from shared.records import JobRecord

NOW = datetime(2026, 11, 30, 12, 0, 30, tzinfo=UTC)
DUE = NOW + timedelta(seconds=40)
GRACE = timedelta(seconds=60)
GENERATION = 1_764_504_000_000


def _job(next_at: datetime | None, generation: int = GENERATION) -> JobRecord:
    properties = JobProperties.model_validate(
        {"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}}
    )
    record = JobRecord(JobKey("s", "g", "c", "j"), properties, created_time=NOW, count_origin=NOW)
    return replace(record, generation=generation, next_execution_time=next_at)


@pytest.mark.parametrize(
    ("case", "job", "generation", "now", "awaits"),
    [
        ("a create in flight: no job yet", None, GENERATION, NOW, True),
        ("a rewrite in flight: the job is still its older generation", _job(NOW), GENERATION + 5, NOW, True),
        ("the dispatcher's advance in flight: same generation, due before it", _job(NOW), GENERATION, NOW, True),
        ("rewritten since the entry: a newer generation", _job(NOW), GENERATION - 5, NOW, False),
        ("advanced beyond it", _job(DUE + timedelta(minutes=1)), GENERATION, NOW, False),
        ("finished", _job(None), GENERATION, NOW, False),
        ("no job, its instant `grace` past", None, GENERATION, DUE + GRACE, False),
        ("a rewrite that never landed, its instant `grace` past", _job(NOW), GENERATION + 5, DUE + GRACE, False),
        ("no job, its instant just past but within `grace`", None, GENERATION, DUE + timedelta(seconds=59), True),
    ],
)
def test_an_entry_not_its_jobs_own_waits_only_for_a_write_that_can_still_land(
    case: str, job: JobRecord | None, generation: int, now: datetime, awaits: bool
) -> None:
    assert job is None or job.next_execution_time != DUE, case  # never the job's own entry
    assert jobstate.awaits_its_write(job, DUE, generation, now, GRACE) is awaits, case
