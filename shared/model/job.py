"""JobDefinition: startTime, action, recurrence, state, and the read-only status."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .actions import JobAction
from .base import CamelCaseOnOutput, WireModel
from .concurrency import OverlapPolicy
from .durations import Duration
from .enums import JobState
from .extensions import MissedRunPolicy
from .instants import UtcDateTime
from .occurrence_control import MAX_EXCEPTIONS, JobPause, OccurrenceException
from .recurrence import JobRecurrence


class JobStatus(WireModel):
    last_execution_time: UtcDateTime | None = Field(default=None, alias="lastExecutionTime")
    next_execution_time: UtcDateTime | None = Field(default=None, alias="nextExecutionTime")
    execution_count: int = Field(default=0, alias="executionCount")
    failure_count: int = Field(default=0, alias="failureCount")
    faulted_count: int = Field(default=0, alias="faultedCount")


class JobProperties(WireModel):
    start_time: UtcDateTime | None = Field(default=None, alias="startTime")
    action: JobAction | None = None
    recurrence: JobRecurrence | None = None
    state: Annotated[JobState, CamelCaseOnOutput] | None = None
    status: JobStatus | None = Field(default=None, json_schema_extra={"readOnly": True})
    expect_success_within: Duration | None = Field(
        default=None,
        alias="expectSuccessWithin",
        description="Extension: the job's main action is expected to succeed at least this often; when it has not "
        "for longer (disabled, faulted, failing or not running), the job shows in the silence metric "
        "and alert (docs/operate.md). From PT1M to 18 months; absent: no expectation.",
    )
    # Newer api-version only (extensions.py JOB_PATHS).
    missed_run_policy: MissedRunPolicy | None = Field(default=None, alias="missedRunPolicy")
    # Newer api-version only (concurrency.py): overlap of a job's own occurrences, and the spread of its instants.
    overlap_policy: OverlapPolicy | None = Field(
        default=None,
        alias="overlapPolicy",
        description="Allow (the default: occurrences may overlap), Skip (an occurrence due while the previous one "
        "still runs is skipped) or BufferOne (it runs when the previous one ends; at most one waits).",
    )
    spread_window: Duration | None = Field(
        default=None,
        alias="spreadWindow",
        description="Each occurrence fires at a fixed offset inside this window after its time, the same offset "
        "every time for the job (PT1S to PT1H, at most the job's shortest interval).",
    )
    # Newer api-version only (occurrence_control.py): single occurrences skipped, moved or added, and a pause.
    exceptions: Annotated[list[OccurrenceException], Field(max_length=MAX_EXCEPTIONS)] | None = Field(
        default=None,
        description="Occurrences skipped or moved, and extra runs, without touching the recurrence (at most 200).",
    )
    pause: JobPause | None = Field(
        default=None,
        description="No occurrence due before `until` runs; the job resumes by itself then (its missed-run policy "
        "decides what of the paused occurrences runs, as after an outage).",
    )


class JobDefinition(WireModel):
    id: str | None = Field(default=None, json_schema_extra={"readOnly": True})
    type: str | None = Field(default=None, json_schema_extra={"readOnly": True})
    name: str | None = Field(default=None, json_schema_extra={"readOnly": True})
    properties: JobProperties | None = None
