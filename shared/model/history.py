"""JobHistoryDefinition: one attempt of one occurrence, as GET .../history returns it."""

from __future__ import annotations

from pydantic import Field

from .base import WireModel
from .concurrency import WaitCause
from .durations import Duration
from .enums import JobExecutionStatus, JobHistoryActionName
from .extensions import LedgerReason, OccurrenceTrigger
from .instants import UtcDateTime
from .occurrence_control import DstShift


class JobHistoryProperties(WireModel):
    start_time: UtcDateTime | None = Field(default=None, alias="startTime")
    end_time: UtcDateTime | None = Field(default=None, alias="endTime")
    expected_execution_time: UtcDateTime | None = Field(default=None, alias="expectedExecutionTime")
    action_name: JobHistoryActionName | None = Field(default=None, alias="actionName")
    status: JobExecutionStatus | None = None
    message: str | None = None
    retry_count: int | None = Field(default=None, alias="retryCount")
    repeat_count: int | None = Field(default=None, alias="repeatCount")
    # Newer api-version only (versions.py EXTENSIONS): the occurrence ledger's members. The first three also name
    # an attempt's occurrence in the attempts list (GET .../attempts), equal to that occurrence's ledger entry's.
    occurrence_time: UtcDateTime | None = Field(
        default=None,
        alias="occurrenceTime",
        description="The occurrence's nominal instant (on an attempt: where its row was written with it).",
    )
    trigger: OccurrenceTrigger | None = Field(
        default=None, description="What made the occurrence (on an attempt: where its row was written with it)."
    )
    execution_tag: str | None = Field(
        default=None,
        alias="executionTag",
        description="The occurrence's identity, which its actions carried (x-ms-execution-tag); on an attempt: its "
        "occurrence's.",
    )
    reason: LedgerReason | None = None
    attempts: int | None = None
    # Newer api-version only (issue 27): how long the occurrence waited after its instant before its first attempt,
    # and for what (the previous occurrence, a concurrency slot, a rate-limit slot); absent when it did not wait.
    waited: Duration | None = None
    waited_for: WaitCause | None = Field(default=None, alias="waitedFor")
    # Newer api-version only (issue 39): a run a DST change placed (after a gap; first or second of a repeated time).
    dst_shift: DstShift | None = Field(default=None, alias="dstShift")


class JobHistoryDefinition(WireModel):
    id: str | None = None
    type: str | None = None
    name: str | None = None
    properties: JobHistoryProperties | None = None
