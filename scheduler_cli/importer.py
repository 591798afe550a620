"""`scheduler import`: every Microsoft.Scheduler resource of an ARM template or of an exported resource list,
applied through the management API, collections before jobs, idempotently.

Contract: the document is resolved offline first (scheduler_cli/template.py: parameters, `--set`, every
problem at once; nothing is written while any remains). Resources of other types are listed as ignored.
For each resource the current state is read first: absent -> create, equal -> unchanged (nothing written),
different -> change. Equality is judged on the API's own model (so `"Http"` equals `"http"`, `"00:00:30"`
equals `"PT30S"`, and defaults the service fills in are not differences). Write-only secrets are never
returned, so a resource that carries one cannot be proven unchanged: it is re-applied (PUT is idempotent)
and says why. Before anything is written, preflight (scheduler_cli/preflight.py) finds what will fail (a
missing collection, the API's validation, quotas): `--what-if` shows it as `fails`; the import reports the
API's own answer. Members the API ignores are listed as warnings (shared/wire_members.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from shared.model.collection import JobCollectionDefinition
from shared.model.job import JobDefinition
from shared.model.versions import STABLE
from shared.wire_members import unknown_members

from .arm_expressions import Scope
from .client import USAGE_ERROR, ApiClient, CliError, collection_path, job_path
from .preflight import Step, preflight
from .template import Ask, Planned, TemplateProblems, plan

ROOTS = {"collection": "JobCollectionDefinition", "job": "JobDefinition"}
# Old Scheduler templates are written in 2016-03-01, which ignores members it does not know (they are warned
# about); the newer api-version would refuse them.
TEMPLATE_API_VERSION = STABLE


@dataclass
class Outcome:
    result: str  # create | change | unchanged | fails | created | updated | ignored | failed
    kind: str
    label: str
    detail: str = ""
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "type": self.kind,
            "resource": self.label,
            "detail": self.detail,
            "warnings": self.warnings,
        }


def _covers(current: Any, desired: Any) -> bool:
    if isinstance(desired, dict):
        return isinstance(current, dict) and all(k in current and _covers(current[k], v) for k, v in desired.items())
    if isinstance(desired, list):
        return (
            isinstance(current, list)
            and len(current) == len(desired)
            and all(_covers(c, d) for c, d in zip(current, desired, strict=True))
        )
    return current == desired


def _squash(location: Any) -> str:
    """ "West US" and "westus" name the same region."""
    return str(location or "").replace(" ", "").lower()


def _compare(item: Planned, current: dict[str, Any]) -> tuple[bool, str]:
    """(unchanged?, why not)."""
    model = JobCollectionDefinition if item.kind == "collection" else JobDefinition
    try:
        desired = model.model_validate(item.body)
        have = model.model_validate(current)
    except ValidationError:
        return False, "differs (the API will validate it)"
    if desired.to_document() != desired.to_wire():
        return False, "carries write-only secrets, which cannot be compared: re-applied"
    wanted, existing = desired.to_wire(), have.to_wire()
    if item.kind == "collection":
        location = wanted.pop("location", None)
        if location and _squash(location) != _squash(existing.get("location")):
            return False, "location differs"
    if item.kind == "job":
        (existing.get("properties") or {}).pop("status", None)
    return (True, "") if _covers(existing, wanted) else (False, "definition differs")


def _resource_path(subscription: str, item: Planned) -> str:
    return (
        collection_path(subscription, item.group, item.collection)
        if item.kind == "collection"
        else job_path(subscription, item.group, item.collection, item.job or "")
    )


def plan_resources(
    document: Any,
    subscription: str,
    group: str | None,
    location: str | None,
    given: list[str],
    sets: list[str] | None = None,
    ask: Ask | None = None,
) -> list[Planned]:
    """The document's resources, collections first (template order within a kind); CliError on problems."""
    try:
        planned = plan(document, Scope(subscription, group, location), given, sets or [], ask)
    except TemplateProblems as problems:
        count = len(problems.problems)
        raise CliError(
            "InvalidTemplate",
            f"{count} problem{'s' if count != 1 else ''} (nothing was written)",
            USAGE_ERROR,
            details=problems.problems,
        ) from None
    order = {"collection": 0, "job": 1}
    return sorted(planned, key=lambda p: order.get(p.kind, 2))


def import_resources(
    client: ApiClient,
    subscription: str,
    document: Any,
    group: str | None,
    location: str | None,
    given: list[str],
    what_if: bool,
    sets: list[str] | None = None,
    ask: Ask | None = None,
    schemas: Callable[[], Mapping[str, Any]] | None = None,
) -> list[Outcome]:
    """`schemas` (the API's OpenAPI schemas, read once the document resolves) finds the members it ignores."""
    planned = plan_resources(document, subscription, group, location, given, sets, ask)
    known = schemas() if schemas is not None and any(p.kind in ROOTS for p in planned) else None
    outcomes: list[tuple[Outcome, Step | None]] = []
    for item in planned:
        if item.kind not in ROOTS:
            outcomes.append(
                (Outcome("ignored", item.kind, item.collection, "not a Microsoft.Scheduler resource"), None)
            )
            continue
        warnings = (
            [f"{item.where}.{u.message()}" for u in unknown_members(item.body, known, ROOTS[item.kind])]
            if known
            else []
        )
        try:
            try:
                current = client.call("GET", _resource_path(subscription, item))
            except CliError as error:
                if error.status != 404:
                    raise
                current = None
        except CliError as error:
            outcomes.append((Outcome("failed", item.kind, item.label, error.line(), warnings), None))
            continue
        same, detail = _compare(item, current) if current is not None else (False, "")
        verdict = "create" if current is None else "unchanged" if same else "change"
        outcomes.append((Outcome(verdict, item.kind, item.label, detail, warnings), Step(item, current, verdict)))
    steps = [step for _, step in outcomes if step is not None]
    failing = preflight(client, subscription, steps, datetime.now(UTC))
    for outcome, step in outcomes:
        if step is None:
            continue
        if what_if:
            if steps.index(step) in failing:
                outcome.result, outcome.detail = "fails", failing[steps.index(step)]
        elif step.verdict != "unchanged":
            try:
                client.call(
                    "PUT",
                    _resource_path(subscription, step.item),
                    step.item.body,
                    {"api-version": TEMPLATE_API_VERSION},
                )
                outcome.result = "created" if step.verdict == "create" else "updated"
            except CliError as error:
                outcome.result, outcome.detail = "failed", error.line()
    return [outcome for outcome, _ in outcomes]
