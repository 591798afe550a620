"""JobCollectionDefinition: the container of jobs, its SKU and its quotas."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, field_validator

from .base import CamelCaseOnOutput, WireModel
from .concurrency import AutoSpread, MaxConcurrentExecutions, TargetRateLimit, unique_hosts
from .enums import JobCollectionState, RecurrenceFrequency, SkuName
from .extensions import HistoryRetention
from .occurrence_control import JobPause


class Sku(WireModel):
    name: SkuName | None = None


# The spec's quota members are int32, as ARM's validation is.
INT32_MAX = 2_147_483_647


def _forgotten(value: int) -> None:
    return None


class JobMaxRecurrence(WireModel):
    frequency: Annotated[RecurrenceFrequency, CamelCaseOnOutput] | None = None
    interval: Annotated[int, Field(ge=1, le=INT32_MAX)] | None = None


class JobCollectionQuota(WireModel):
    max_job_count: Annotated[int, Field(ge=1, le=INT32_MAX)] | None = Field(default=None, alias="maxJobCount")
    # Accepted (an int32, as the spec says) and then forgotten: the real service never returned it and it did
    # nothing (docs/wire-contract.md §2.1), so the model keeps None and it is neither stored nor answered.
    max_job_occurrence: Annotated[int, Field(ge=-2_147_483_648, le=INT32_MAX), AfterValidator(_forgotten)] | None = (
        Field(
            default=None,
            alias="maxJobOccurrence",
            description="Accepted and ignored; never returned.",
            json_schema_extra={"writeOnly": True},
        )
    )
    max_recurrence: JobMaxRecurrence | None = Field(default=None, alias="maxRecurrence")


class JobCollectionProperties(WireModel):
    sku: Sku | None = None
    state: JobCollectionState | None = None
    quota: JobCollectionQuota | None = None
    # Newer api-version only (extensions.py COLLECTION_PATHS).
    history_retention: HistoryRetention | None = Field(default=None, alias="historyRetention")
    # Newer api-version only (concurrency.py): limits held across every instance.
    max_concurrent_executions: MaxConcurrentExecutions | None = Field(
        default=None,
        alias="maxConcurrentExecutions",
        description="The most occurrences of the collection's jobs that run at once, across every instance "
        "(1-1000; absent: no limit). Occurrences beyond it wait, in order.",
    )
    target_rate_limits: list[TargetRateLimit] | None = Field(
        default=None,
        alias="targetRateLimits",
        description="Per target host, the most requests per second the collection's Http actions send it "
        "(at most 20 hosts). Requests beyond wait for their slot, in order.",
    )
    # Newer api-version only (concurrency.py, issue 40).
    auto_spread: AutoSpread | None = Field(
        default=None,
        alias="autoSpread",
        description="Occurrences of a second that would exceed their destination's budget (a targetRateLimits rule, "
        "or what a destination that pushed back accepts) fire later, deterministically, each at most `tolerance` "
        "after its time; the others keep their second.",
    )
    # Newer api-version only (occurrence_control.py): the collection's pause, held at each occurrence's second.
    pause: JobPause | None = Field(
        default=None,
        description="No scheduled occurrence of the collection's jobs due before `until` runs (each is named in "
        "the ledger, reason Paused, with the note); at `until` they go on by themselves.",
    )

    @field_validator("target_rate_limits")
    @classmethod
    def _unique_hosts(cls, value: list[TargetRateLimit] | None) -> list[TargetRateLimit] | None:
        return unique_hosts(value)


class JobCollectionDefinition(WireModel):
    id: str | None = Field(default=None, json_schema_extra={"readOnly": True})
    type: str | None = Field(default=None, json_schema_extra={"readOnly": True})
    name: str | None = None
    location: str | None = None
    tags: dict[str, str] | None = None
    properties: JobCollectionProperties | None = None
