"""JobCollectionDefinition: the container of jobs, its SKU and its quotas."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from .base import CamelCaseOnOutput, WireModel
from .enums import JobCollectionState, RecurrenceFrequency, SkuName
from .extensions import HistoryRetention


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


class JobCollectionDefinition(WireModel):
    id: str | None = Field(default=None, json_schema_extra={"readOnly": True})
    type: str | None = Field(default=None, json_schema_extra={"readOnly": True})
    name: str | None = None
    location: str | None = None
    tags: dict[str, str] | None = None
    properties: JobCollectionProperties | None = None
