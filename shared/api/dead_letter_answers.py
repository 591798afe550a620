"""The wire shapes of a collection's dead letters (dead_letters.py builds them as plain JSON), as models for the
OpenAPI documents (openapi.py); like answers.py, nothing validates or renders with them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from ..model.base import WireModel
from ..model.history import JobHistoryDefinition


class DeadLetterProperties(WireModel):
    job_name: str = Field(alias="jobName")
    occurrence_time: datetime = Field(alias="occurrenceTime", description="The occurrence's nominal instant.")
    trigger: str | None = Field(default=None, description="Schedule, RunNow or Backfill.")
    execution_tag: str = Field(
        alias="executionTag", description="The occurrence's identity (Idempotency-Key, MessageId); a replay keeps it."
    )
    generation: int = Field(description="The job definition its latest run ran under.")
    state: Literal["DeadLettered", "Replaying", "Resolved"] = Field(
        description="DeadLettered: its latest run ended failed for good. Replaying: a replay is in flight. "
        "Resolved: its latest replay succeeded (or its error action did)."
    )
    action_name: str = Field(alias="actionName", description="Of the last attempt of its latest run.")
    status: str = Field(description="Of that attempt: Failed, or Completed once Resolved.")
    message: str = Field(description="That attempt's outcome: the target's answer as history keeps it.")
    retry_count: int = Field(alias="retryCount")
    start_time: datetime | None = Field(default=None, alias="startTime")
    end_time: datetime | None = Field(default=None, alias="endTime", description="When its latest run ended.")
    replay_count: int = Field(alias="replayCount", description="How many replays were queued.")
    replayed_at: datetime | None = Field(default=None, alias="replayedAt", description="When the latest was asked.")
    attempts: list[JobHistoryDefinition] | None = Field(
        default=None, description="GET of one only: its occurrence's attempts (its replays' too), newest first."
    )


class DeadLetter(WireModel):
    id: str
    type: str
    name: str
    properties: DeadLetterProperties


class DeadLetterListResult(WireModel):
    value: list[DeadLetter]
    next_link: str | None = Field(default=None, alias="nextLink")


class DeadLetterReplayRequest(WireModel):
    """Either `ids` (1 to 100) or `all: true` (up to 100 not in flight, newest occurrence first)."""

    ids: list[str] | None = None
    all: bool | None = None


class DeadLetterError(WireModel):
    code: str
    message: str


class DeadLetterReplayed(WireModel):
    id: str
    status: int = Field(description="200 queued; 404 unknown; 409 in flight or its job deleted; 503 not queued.")
    error: DeadLetterError | None = None


class DeadLetterReplayResult(WireModel):
    value: list[DeadLetterReplayed]
    more: bool = Field(description="`all` left dead letters for another call.")


class DeadLetterPurgeResult(WireModel):
    purged: int
    in_flight: int = Field(alias="inFlight", description="Kept: a replay of each is in flight.")
