"""The api-versions of Microsoft.Scheduler served here, and which extension properties each one knows.

Contract (docs/wire-contract.md §8):
- `2016-03-01` (with its aliases `2016-01-01` and `2014-08-01-preview`) answers exactly as the recorded service
  did: no extension property appears in its answers or in its OpenAPI document.
- `2026-12-01-preview` is the same resource model plus the extensions (`EXTENSIONS`). Every version accepts
  every property on input (a 2016-03-01 client that still sends `timeZone` keeps working); one stored
  document holds them all.
- As ARM does, a PUT or PATCH made with a version keeps the stored properties that version does not know
  (`carry_over`), so an official 2016-03-01 client's read-modify-write leaves `timeZone` where it was.

`EXTENSIONS` is the one place an extension is declared: a member a model gained in a version, or an enum value a
member gained (and what older versions are shown instead). Rendering (`hide`), merging (`carry_over`) and the
OpenAPI documents (`hide_in_schemas`) all read it. Documents here are wire JSON: canonical member names.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from ..keys import fold_case
from .actions import HttpRequest, RetryPolicy
from .collection import JobCollectionProperties
from .enums import HttpAuthenticationType, JobExecutionStatus, RetryType
from .history import JobHistoryProperties
from .job import JobProperties
from .recurrence import JobRecurrence

STABLE = "2016-03-01"
PREVIEW = "2026-12-01-preview"


@dataclass(frozen=True)
class ApiVersion:
    name: str
    rank: int  # versions of a higher rank know every extension of the lower ones

    def knows(self, extension: Extension) -> bool:
        return self.rank >= VERSIONS[extension.since].rank


# Every api-version accepted; the two older names, which the real service also listed, are aliases of 2016-03-01.
VERSIONS: dict[str, ApiVersion] = {
    STABLE: ApiVersion(STABLE, 0),
    "2016-01-01": ApiVersion("2016-01-01", 0),
    "2014-08-01-preview": ApiVersion("2014-08-01-preview", 0),
    PREVIEW: ApiVersion(PREVIEW, 1),
}
NEWEST = VERSIONS[PREVIEW]
DOCUMENTED = (STABLE, PREVIEW)  # the versions with an OpenAPI document of their own


@dataclass(frozen=True)
class Extension:
    """A member `member` of `model` that versions before `since` do not know; with `value`, only that value of
    the member is new, and older versions are shown `shown_as` instead. With `within` as well, the value is that
    of the member's own member `within` (an object's type): older versions are shown no `member` at all while it
    holds the value, and a write in them that leaves the member out keeps it."""

    model: type[BaseModel]
    member: str  # the JSON name
    since: str
    value: Enum | None = None
    shown_as: Enum | None = None
    within: str | None = None


# A job's document is rendered and merged through these rules (shared/api/jobs.py); collection and history
# answers are hidden through them by shared/api/newer.py. The issue-26 rows (missed runs, retention, the
# ledger) are documented in docs/decisions.md, "Missed runs, backfill, the ledger".
EXTENSIONS: tuple[Extension, ...] = (
    Extension(JobRecurrence, "timeZone", PREVIEW),
    Extension(RetryPolicy, "retryType", PREVIEW, value=RetryType.EXPONENTIAL, shown_as=RetryType.FIXED),
    Extension(RetryPolicy, "maxRetryInterval", PREVIEW),
    Extension(JobProperties, "expectSuccessWithin", PREVIEW),
    Extension(JobProperties, "missedRunPolicy", PREVIEW),
    Extension(JobCollectionProperties, "historyRetention", PREVIEW),
    *(
        Extension(JobHistoryProperties, member, PREVIEW)
        for member in ("occurrenceTime", "trigger", "executionTag", "reason", "attempts")
    ),
    # A ledger entry's status; 2016-03-01 history never holds one (its entries are attempts and notes).
    Extension(JobHistoryProperties, "status", PREVIEW, value=JobExecutionStatus.SKIPPED),
    # Issue 27 (model/concurrency.py), documented in
    # docs/decisions.md, "Overlap, limits, long-running completion, spread".
    Extension(JobProperties, "overlapPolicy", PREVIEW),
    Extension(JobProperties, "spreadWindow", PREVIEW),
    Extension(HttpRequest, "asyncCompletion", PREVIEW),
    Extension(JobCollectionProperties, "maxConcurrentExecutions", PREVIEW),
    Extension(JobCollectionProperties, "targetRateLimits", PREVIEW),
    Extension(JobHistoryProperties, "waited", PREVIEW),
    Extension(JobHistoryProperties, "waitedFor", PREVIEW),
    Extension(JobHistoryProperties, "status", PREVIEW, value=JobExecutionStatus.WAITING),
    Extension(JobHistoryProperties, "status", PREVIEW, value=JobExecutionStatus.RUNNING),
    # Issue 39 (model/occurrence_control.py), documented in docs/decisions.md, "Occurrence control".
    Extension(JobProperties, "exceptions", PREVIEW),
    Extension(JobProperties, "pause", PREVIEW),
    Extension(JobRecurrence, "cron", PREVIEW),
    Extension(JobRecurrence, "dstPolicy", PREVIEW),
    Extension(JobCollectionProperties, "pause", PREVIEW),
    # Issue 40: a token of the app's managed identity (docs/identity.md, "Managed identity for targets"). Shown
    # to 2016-03-01 as no authentication: the official client cannot write back a type it has no class for
    # (NotSpecified included: it reads that as a type of None, which it then refuses to send).
    Extension(HttpRequest, "authentication", PREVIEW, value=HttpAuthenticationType.MANAGED_IDENTITY, within="type"),
    Extension(JobHistoryProperties, "dstShift", PREVIEW),
    Extension(JobCollectionProperties, "autoSpread", PREVIEW),
)


def api_version(name: str | None) -> ApiVersion | None:
    return VERSIONS.get(name or "")


def hide(version: ApiVersion, model: type[BaseModel], document: dict[str, Any]) -> dict[str, Any]:
    """`document` (a rendered `model`, changed in place and returned) as `version` shows it: without the members
    it does not know, and with the values it does not know shown as the ones it does."""
    for node, node_model in _objects(document, model):
        for extension in _unknown(version, node_model):
            if extension.value is None or (
                extension.within is not None and _is(_held(node, extension), extension.value)
            ):
                node.pop(extension.member, None)
            elif extension.shown_as is not None and _is(node.get(extension.member), extension.value):
                node[extension.member] = _wire_value(node_model, extension.member, extension.shown_as)
    return document


def carry_over(version: ApiVersion, model: type[BaseModel], incoming: dict[str, Any], stored: dict[str, Any]) -> None:
    """Keep in `incoming` (a PUT body's or a PATCH's `model` document, changed in place) what `stored` holds that
    `version` does not know: an unknown member the request left out, an unknown value the request sent back as
    the value it was shown. Objects are matched by their place in both documents."""
    for node, node_model, old in _pairs(incoming, stored, model):
        for extension in _unknown(version, node_model):
            member = extension.member
            if extension.within is not None:
                if member not in node and _is(_held(old, extension), extension.value):
                    node[member] = old[member]
            elif extension.value is not None:
                if _is(node.get(member), extension.shown_as) and _is(old.get(member), extension.value):
                    node[member] = old[member]
            elif member not in node and member in old:
                node[member] = old[member]


def hide_in_schemas(version: ApiVersion, schemas: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI components (from models_json_schema, keyed by model and enum name) as `version` documents
    them: unknown members removed, unknown enum values removed from their enum."""
    for extension in EXTENSIONS:
        if version.knows(extension):
            continue
        if extension.value is None:
            schemas.get(extension.model.__name__, {}).get("properties", {}).pop(extension.member, None)
        else:
            enum = schemas.get(type(extension.value).__name__, {})
            if "enum" in enum:
                enum["enum"] = [v for v in enum["enum"] if v != extension.value.value]
    return schemas


def _unknown(version: ApiVersion, model: type[BaseModel]) -> list[Extension]:
    return [e for e in _by_model().get(model, ()) if not version.knows(e)]


@cache
def _by_model() -> dict[type[BaseModel], tuple[Extension, ...]]:
    return {model: tuple(e for e in EXTENSIONS if e.model is model) for model in {e.model for e in EXTENSIONS}}


def _held(node: dict[str, Any], extension: Extension) -> Any:
    """The value an extension's row compares: the member's, or with `within` its own member's."""
    value = node.get(extension.member)
    if extension.within is None:
        return value
    return value.get(extension.within) if isinstance(value, dict) else None


def _is(value: Any, member: Enum | None) -> bool:
    return member is not None and isinstance(value, str) and fold_case(value) == fold_case(str(member.value))


def _wire_value(model: type[BaseModel], member: str, value: Enum) -> Any:
    """`value` as the model's field emits it (camel-cased where the service camel-cased)."""
    name = next(name for name, f in model.model_fields.items() if (f.alias or name) == member)
    values: dict[str, Any] = {name: value}
    return model.model_construct(**values).model_dump(mode="json", by_alias=True, include={name})[member]


@cache
def _children(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """JSON name -> nested model, for the members of `model` that hold a model or a list of them."""
    found = {}
    for name, field in model.model_fields.items():
        nested = _model_in(field.annotation)
        if nested is not None:
            found[field.alias or name] = nested
    return found


def _model_in(annotation: Any) -> type[BaseModel] | None:
    origin = get_origin(annotation)
    if origin in (Annotated, Union, types.UnionType, list):
        return next((m for m in map(_model_in, get_args(annotation)) if m is not None), None)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _objects(document: Any, model: type[BaseModel]) -> Iterator[tuple[dict[str, Any], type[BaseModel]]]:
    """Every object of the document with the model it is an instance of (lists' items included)."""
    if isinstance(document, list):
        for item in document:
            yield from _objects(item, model)
        return
    if not isinstance(document, dict):
        return
    yield document, model
    for member, child in _children(model).items():
        yield from _objects(document.get(member), child)


def _pairs(
    incoming: Any, stored: Any, model: type[BaseModel]
) -> Iterator[tuple[dict[str, Any], type[BaseModel], dict[str, Any]]]:
    """The objects at the same place in both documents (list items by position)."""
    if isinstance(incoming, list) and isinstance(stored, list):
        for new, old in zip(incoming, stored, strict=False):
            yield from _pairs(new, old, model)
        return
    if not isinstance(incoming, dict) or not isinstance(stored, dict):
        return
    yield incoming, model, stored
    for member, child in _children(model).items():
        yield from _pairs(incoming.get(member), stored.get(member), child)
