"""List envelopes and the ARM error body: the remaining wire shapes of the API (used by the OpenAPI document)."""

from __future__ import annotations

from pydantic import Field

from .base import WireModel
from .collection import JobCollectionDefinition
from .history import JobHistoryDefinition
from .job import JobDefinition


class JobCollectionListResult(WireModel):
    value: list[JobCollectionDefinition] = Field(default_factory=list)
    next_link: str | None = Field(default=None, alias="nextLink", description="Absolute URL of the next page.")


class JobListResult(WireModel):
    value: list[JobDefinition] = Field(default_factory=list)
    next_link: str | None = Field(default=None, alias="nextLink", description="Absolute URL of the next page.")


class JobHistoryListResult(WireModel):
    value: list[JobHistoryDefinition] = Field(default_factory=list)
    next_link: str | None = Field(default=None, alias="nextLink", description="Absolute URL of the next page.")


class ErrorDetail(WireModel):
    code: str
    message: str = Field(description="Names the offending property path for validation errors.")


class ErrorResponse(WireModel):
    error: ErrorDetail
