"""JobDefinition: startTime, action, recurrence, state, and the read-only status."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .actions import JobAction
from .base import CamelCaseOnOutput, UtcDateTime, WireModel
from .enums import JobState
from .extensions import MissedRunPolicy
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
    # Newer api-version only (extensions.py JOB_PATHS).
    missed_run_policy: MissedRunPolicy | None = Field(default=None, alias="missedRunPolicy")


class JobDefinition(WireModel):
    id: str | None = Field(default=None, json_schema_extra={"readOnly": True})
    type: str | None = Field(default=None, json_schema_extra={"readOnly": True})
    name: str | None = Field(default=None, json_schema_extra={"readOnly": True})
    properties: JobProperties | None = None
