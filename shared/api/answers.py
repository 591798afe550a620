"""The wire shapes the handlers build as plain JSON (the preview, an occurrence explained, backfill, what-if, role
assignments, health), as models for the OpenAPI documents (openapi.py), which take their schemas from pydantic like
every other shape.

Nothing validates or renders with these models: the handlers' own modules say what each member means, and
tests/api/test_generated_client.py checks that every member of each real answer is one these models declare.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from ..model import JobCollectionDefinition, JobDefinition, JobPause, OccurrenceException
from ..model.base import WireModel


class OccurrenceNote(WireModel):
    code: str = Field(
        description="Of an occurrence: DstGap, DstFold, EndByCount, EndByEndTime, OneShot, MissedRunPolicy. Of the "
        "job: Job<state> (nothing fires), MissedRunPolicy, NoOccurrence, EndOfCalendar."
    )
    message: str


class PreviewOccurrence(WireModel):
    occurrence_time: datetime = Field(alias="occurrenceTime", description="The nominal occurrence.")
    fire_time: datetime = Field(alias="fireTime", description="When the dispatcher fires it (spread, late, missed).")
    notes: list[OccurrenceNote]


class OccurrencePreview(WireModel):
    """The next occurrences of a job, as the dispatcher will fire them (GET .../occurrences, and a what-if)."""

    value: list[PreviewOccurrence]
    notes: list[OccurrenceNote] = Field(description="Notes of the job itself (a Disabled job fires nothing).")


class ForecastMinute(WireModel):
    minute: datetime = Field(description="The minute's first second.")
    count: int = Field(description="Occurrences that fire in it.")


class ForecastSecond(WireModel):
    second: datetime
    count: int = Field(description="Occurrences that fire in it.")


class OverLimitSecond(WireModel):
    second: datetime
    count: int = Field(description="The collection's occurrences under the rule (every host it covers) in the second.")
    collection: str = Field(description="The resource id of the collection whose rule it exceeds.")


class ForecastDestination(WireModel):
    destination: str = Field(description="An Http host, a Service Bus namespace or a storage account (lower case).")
    kind: Literal["Http", "ServiceBus", "StorageQueue"]
    total: int
    busiest_second: ForecastSecond = Field(alias="busiestSecond", description="The earliest of the most crowded.")
    limit: float | None = Field(description="requestsPerSecond of the targetRateLimits rule for it (the lowest).")
    limit_host: str | None = Field(alias="limitHost", description="That rule's host (*. and a domain: shared).")
    over_limit: list[OverLimitSecond] = Field(
        alias="overLimit",
        description="Seconds over the limit: more than max(1, requestsPerSecond); at most 100, most crowded first.",
    )
    over_limit_seconds: int = Field(alias="overLimitSeconds", description="How many seconds are over it in all.")
    minutes: list[ForecastMinute]


class Forecast(WireModel):
    """The occurrences due in each minute of the next hours, and per destination (GET .../forecast): as the
    dispatcher fires them (schedules, exceptions, pauses, spread), not counting retries, error actions, run-now."""

    since: datetime = Field(alias="from", description="Now.")
    until: datetime = Field(alias="to", description="`hours` later.")
    minutes: list[ForecastMinute] = Field(description="Only the minutes with occurrences, in order.")
    destinations: list[ForecastDestination] = Field(description="The busiest first.")
    notes: list[OccurrenceNote] = Field(
        description="Collection<State> (fires nothing), CollectionPaused, JobsNotEnabled, JobCut (more than 10,000 "
        "occurrences of one job: the first counted), Truncated (1,000,000 counted: the jobs after them are not), "
        "Readable (only the collections the caller may read)."
    )


class ManualRun(WireModel):
    trigger: Literal["RunNow", "Backfill"]
    status: str = Field(description="Of its ledger entry: Completed, Failed, Running, Waiting, Skipped.")
    attempts: int
    execution_tag: str = Field(alias="executionTag")


class OccurrenceExplanation(WireModel):
    """One instant of a job explained (GET .../occurrences/{instant}): is it an occurrence, and what happened or
    will happen to it, by which rule."""

    occurrence_time: datetime = Field(alias="occurrenceTime", description="The instant asked about, in UTC.")
    is_occurrence: bool = Field(
        alias="isOccurrence", description="An occurrence of the series the job runs (its exceptions applied)."
    )
    nominal: bool = Field(description="An occurrence of the job's recurrence (its startTime, for a one-shot).")
    verdict: Literal[
        "Ran",
        "Failed",
        "Running",
        "Waiting",
        "Skipped",
        "Postponed",
        "WillRun",
        "WillNotRun",
        "NotAnOccurrence",
        "NoRecord",
    ]
    reason: str = Field(
        description="The ledger entry's reason, or the rule that decided: Schedule, Excepted, Moved, Extra, Paused, "
        "JobDisabled, Job<State>, CollectionDisabled, CollectionSuspended, MissedRunPolicy, SkippedByPolicy, "
        "Postponed, BeforeCreation (no entry: before the job existed), Retention (no entry: pruned)."
    )
    message: str = Field(description="One sentence for a person.")
    fire_time: datetime | None = Field(default=None, alias="fireTime", description="WillRun: when it fires.")
    status: str | None = Field(default=None, description="Of the occurrence's ledger entry.")
    attempts: int | None = Field(default=None, description="Of the occurrence's ledger entry.")
    nearest: list[datetime] | None = Field(
        default=None, description="NotAnOccurrence: the occurrences just before and just after the instant."
    )
    exception: OccurrenceException | None = Field(default=None, description="The exception that decided.")
    pause: JobPause | None = Field(default=None, description="The pause that decided.")
    waited: str | None = Field(default=None, description="ISO 8601 duration it waited (or waits) for a limit.")
    waited_for: Literal["Previous", "Concurrency", "RateLimit", "Destination"] | None = Field(
        default=None, alias="waitedFor"
    )
    manual_runs: list[ManualRun] | None = Field(
        default=None,
        alias="manualRuns",
        description="Run-now and backfill runs at the same instant: occurrences of their own, never this one.",
    )


class BackfillRequest(WireModel):
    """The past interval to run again: the occurrences at or after `from` and before `to` (names ignore case)."""

    since: datetime = Field(alias="from", description="ISO 8601 date-time, inclusive.")
    until: datetime = Field(alias="to", description="ISO 8601 date-time, exclusive.")


class BackfilledOccurrence(WireModel):
    occurrence_time: datetime = Field(alias="occurrenceTime")
    fire_time: datetime = Field(alias="fireTime")
    execution_tag: str = Field(
        alias="executionTag", description="The identity its actions carry (the ledger's executionTag)."
    )


class BackfillResult(WireModel):
    """The occurrences queued (or, asked as a what-if, that would be queued), oldest first."""

    value: list[BackfilledOccurrence]


class JobWhatIf(WireModel):
    """A job PUT or PATCH asked as a what-if: nothing is written."""

    change_type: Literal["Create", "Modify"] = Field(alias="changeType")
    job: JobDefinition = Field(description="The job as it would be stored and answered.")
    occurrences: OccurrencePreview = Field(description="Its next occurrences (query count and from).")


class JobDeleteWhatIf(WireModel):
    """A job DELETE asked as a what-if: nothing is removed."""

    change_type: Literal["Delete"] = Field(alias="changeType")
    job: JobDefinition | None = Field(
        default=None, description="The job it would remove; absent for a stored job that cannot be read."
    )


class JobCollectionWhatIf(WireModel):
    """A collection PUT or PATCH asked as a what-if (plan and quota checks included): nothing is written."""

    change_type: Literal["Create", "Modify"] = Field(alias="changeType")
    job_collection: JobCollectionDefinition = Field(alias="jobCollection")


class RoleAssignmentProperties(WireModel):
    role_definition_id: str = Field(alias="roleDefinitionId")
    principal_id: str = Field(alias="principalId")
    principal_type: str | None = Field(default=None, alias="principalType")
    scope: str
    created_on: datetime = Field(alias="createdOn")
    updated_on: datetime = Field(alias="updatedOn")
    created_by: str | None = Field(default=None, alias="createdBy")
    updated_by: str | None = Field(default=None, alias="updatedBy")


class RoleAssignment(WireModel):
    id: str
    name: str
    type: Literal["Microsoft.Authorization/roleAssignments"]
    properties: RoleAssignmentProperties


class RoleAssignmentRequestProperties(WireModel):
    role_definition_id: str = Field(
        alias="roleDefinitionId",
        description="/subscriptions/{s}/providers/Microsoft.Authorization/roleDefinitions/{id}",
    )
    principal_id: str = Field(alias="principalId", description="A GUID.")
    principal_type: Literal["User", "Group", "ServicePrincipal", "ForeignGroup", "Device"] | None = Field(
        default=None, alias="principalType"
    )


class RoleAssignmentCreateParameters(WireModel):
    properties: RoleAssignmentRequestProperties


class RoleAssignmentListResult(WireModel):
    value: list[RoleAssignment]
    next_link: str | None = Field(default=None, alias="nextLink", description="Present only when more follow.")


class SilentJob(WireModel):
    id: str = Field(description="The job's resource id.")
    expect_success_within: str = Field(alias="expectSuccessWithin", description="Its expectation (ISO 8601).")
    last_success: datetime | None = Field(alias="lastSuccess", description="Null: it never succeeded.")
    silent_since: datetime = Field(alias="silentSince", description="Its last success, or its creation.")
    silent_seconds: float = Field(alias="silentSeconds")
    state: str


class SilentJobs(WireModel):
    """The jobs past their expectation of success (expectSuccessWithin) at the last tick: they leave the status
    as it is. `jobs` (the longest silent first, at most 20) only where the API is open (SCHEDULER_AUTH=none)."""

    count: int
    checked_at: datetime | None = Field(alias="checkedAt", description="The tick that found them.")
    jobs: list[SilentJob] | None = None


class HealthReport(WireModel):
    """GET /health (anonymous, no secrets): 200 Healthy or Degraded, 503 Unhealthy."""

    status: Literal["Healthy", "Degraded", "Unhealthy"]
    checked_at: datetime | None = Field(default=None, alias="checkedAt")
    storage: dict[str, Any]
    dispatcher: dict[str, Any] | None = None
    backlog: dict[str, Any] | None = None
    executor: dict[str, Any] | None = Field(
        default=None,
        description="The occurrence queue: queuedMessages (about, hidden ones too), frontDue of its front visible "
        "message, heldDue and heldBatches of the batches the hosts hold waiting, behindSeconds of the earlier, behind "
        "(past behindAfterSeconds: Degraded, still 200).",
    )
    clock: dict[str, Any] | None = None
    problems: list[str] = Field(default_factory=list, description="One sentence each.")
    silent_jobs: SilentJobs | None = Field(default=None, alias="silentJobs")


class OpenApiDocument(WireModel):
    """An OpenAPI 3.1 document (this one's shape)."""

    openapi: str
    info: dict[str, Any]
    servers: list[dict[str, Any]]
    security: list[dict[str, Any]]
    paths: dict[str, Any]
    components: dict[str, Any]
