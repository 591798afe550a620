"""JobHistoryDefinition: one attempt of one occurrence, as GET .../history returns it."""

from __future__ import annotations

from pydantic import Field

from .base import WireModel
from .enums import JobExecutionStatus, JobHistoryActionName
from .instants import UtcDateTime


class JobHistoryProperties(WireModel):
    start_time: UtcDateTime | None = Field(default=None, alias="startTime")
    end_time: UtcDateTime | None = Field(default=None, alias="endTime")
    expected_execution_time: UtcDateTime | None = Field(default=None, alias="expectedExecutionTime")
    action_name: JobHistoryActionName | None = Field(default=None, alias="actionName")
    status: JobExecutionStatus | None = None
    message: str | None = None
    retry_count: int | None = Field(default=None, alias="retryCount")
    repeat_count: int | None = Field(default=None, alias="repeatCount")


class JobHistoryDefinition(WireModel):
    id: str | None = None
    type: str | None = None
    name: str | None = None
    properties: JobHistoryProperties | None = None
