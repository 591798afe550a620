"""`scheduler import`: every Microsoft.Scheduler resource of an ARM template or of an exported resource list,
applied through the management API, collections before jobs, idempotently.

Contract: resources of other types are listed as ignored; a template's parameters come from `--parameter
name=value` or a parameters file (`{"parameters": {"x": {"value": ...}}}`), else their defaultValue; an
expression the importer cannot resolve stops the import before anything is written. For each resource the
current state is read first: absent -> create, equal -> unchanged (nothing written), different -> change.
Equality is judged on the API's own model (so `"Http"` equals `"http"`, `"00:00:30"` equals `"PT30S"`, and
defaults the service fills in are not differences). Write-only secrets are never returned, so a resource
that carries one cannot be proven unchanged: it is re-applied (PUT is idempotent) and says why.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from shared.model.collection import JobCollectionDefinition
from shared.model.job import JobDefinition

from .arm_expressions import Evaluator, Scope, TemplateError
from .client import USAGE_ERROR, ApiClient, CliError, collection_path, job_path

COLLECTION_TYPE = "microsoft.scheduler/jobcollections"
JOB_TYPE = "microsoft.scheduler/jobcollections/jobs"
_ID = re.compile(r"/subscriptions/[^/]+/resourceGroups/(?P<group>[^/]+)/providers/Microsoft\.Scheduler/"
                 r"jobCollections/(?P<collection>[^/]+)(?:/jobs/(?P<job>[^/]+))?$", re.IGNORECASE)


@dataclass
class Planned:
    kind: str  # "collection" | "job" | the ignored resource's type
    group: str
    collection: str
    job: str | None
    body: dict[str, Any]

    @property
    def label(self) -> str:
        return "/".join(p for p in (self.group, self.collection, self.job) if p)


@dataclass
class Outcome:
    result: str  # create | change | unchanged | created | updated | ignored | failed
    kind: str
    label: str
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {"result": self.result, "type": self.kind, "resource": self.label, "detail": self.detail}


def _parameter_values(declared: dict[str, Any], given: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for item in given:
        if "=" not in item:
            document = json.loads(Path(item).read_text("utf-8"))
            entries = document.get("parameters", document) if isinstance(document, dict) else {}
            values.update({k: (v.get("value") if isinstance(v, dict) and "value" in v else v)
                           for k, v in entries.items()})
            continue
        name, _, text = item.partition("=")
        kind = str((declared.get(name) or {}).get("type", "string")).lower()
        try:
            values[name] = (int(text) if kind == "int" else text.lower() == "true" if kind == "bool"
                            else json.loads(text) if kind in ("object", "array") else text)
        except ValueError:
            raise TemplateError(f"--parameter {name}: '{text}' is not a valid {kind}") from None
    return values


def _template_resources(template: dict[str, Any], subscription: str, group: str | None, location: str | None,
                        given: list[str]) -> list[Planned]:
    declared = template.get("parameters") or {}
    supplied = _parameter_values(declared, given)
    unknown = sorted(set(supplied) - set(declared))
    if unknown:
        raise TemplateError(f"--parameter: the template declares no parameter {', '.join(unknown)}")
    evaluator = Evaluator({}, template.get("variables") or {}, Scope(subscription, group, location))
    for name, spec in declared.items():
        if name in supplied:
            evaluator.parameters[name] = supplied[name]
        elif isinstance(spec, dict) and "defaultValue" in spec:
            evaluator.parameters[name] = evaluator.resolve(spec["defaultValue"], f"parameters.{name}.defaultValue")
        else:
            raise TemplateError(f"parameters.{name}: no value; pass --parameter {name}=VALUE")
        allowed = (spec or {}).get("allowedValues") if isinstance(spec, dict) else None
        if allowed and evaluator.parameters[name] not in allowed:
            raise TemplateError(f"parameters.{name}: '{evaluator.parameters[name]}' is not one of {allowed}")
    planned: list[Planned] = []

    def walk(resources: Any, parent_type: str, parent_name: str, where: str) -> None:
        items = list(resources.values()) if isinstance(resources, dict) else list(resources or [])
        for index, resource in enumerate(items):
            at = f"{where}[{index}]"
            if not isinstance(resource, dict):
                raise TemplateError(f"{at}: a resource must be an object")
            if "copy" in resource:
                raise TemplateError(f"{at}.copy: copy loops are not supported; list the resources one by one")
            if "condition" in resource and not evaluator.resolve(resource["condition"], f"{at}.condition"):
                continue
            kind = str(evaluator.resolve(resource.get("type", ""), f"{at}.type"))
            name = str(evaluator.resolve(resource.get("name", ""), f"{at}.name"))
            if parent_type and "/" not in kind.split("/", 1)[-1] and not kind.lower().startswith("microsoft."):
                kind, name = f"{parent_type}/{kind}", (name if "/" in name else f"{parent_name}/{name}")
            body = {k: evaluator.resolve(resource[k], f"{at}.{k}")
                    for k in ("location", "tags", "properties") if k in resource}
            planned.append(_planned(kind, name, group, body, at))
            if resource.get("resources"):
                walk(resource["resources"], kind, name, f"{at}.resources")

    walk(template.get("resources"), "", "", "resources")
    return planned


def _planned(kind: str, name: str, group: str | None, body: dict[str, Any], where: str) -> Planned:
    lowered = kind.lower()
    if isinstance(body.get("properties"), dict):  # read-only status of an export is not part of the definition
        body["properties"] = {k: v for k, v in body["properties"].items() if k.lower() != "status"}
    if lowered not in (COLLECTION_TYPE, JOB_TYPE):
        return Planned(kind, group or "", name, None, {})
    if not group:
        raise TemplateError(f"{where}: pass --resource-group for the template's resources")
    parts = name.split("/")
    if lowered == COLLECTION_TYPE and len(parts) == 1:
        return Planned("collection", group, parts[0], None, body)
    if lowered == JOB_TYPE and len(parts) == 2:
        return Planned("job", group, parts[0], parts[1], body)
    raise TemplateError(f"{where}.name: '{name}' does not fit the type {kind}")


def _exported_resources(items: list[Any], group: str | None) -> list[Planned]:
    planned: list[Planned] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise TemplateError(f"[{index}]: a resource must be an object")
        kind = str(item.get("type", ""))
        found = _ID.search(str(item.get("id", "")))
        body = {k: item[k] for k in ("location", "tags", "properties") if k in item}
        if kind.lower() in (COLLECTION_TYPE, JOB_TYPE) and found:
            name = found["collection"] + (f"/{found['job']}" if found["job"] else "")
            planned.append(_planned(kind, name, group or found["group"], body, f"[{index}]"))
        else:
            planned.append(_planned(kind, str(item.get("name", "")), group, body, f"[{index}]"))
    return planned


def _covers(current: Any, desired: Any) -> bool:
    if isinstance(desired, dict):
        return isinstance(current, dict) and all(k in current and _covers(current[k], v) for k, v in desired.items())
    if isinstance(desired, list):
        return isinstance(current, list) and len(current) == len(desired) and all(
            _covers(c, d) for c, d in zip(current, desired, strict=True))
    return current == desired


def _squash(location: Any) -> str:
    """"West US" and "westus" name the same region."""
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


def plan_resources(document: Any, subscription: str, group: str | None, location: str | None,
                   given: list[str]) -> list[Planned]:
    try:
        if isinstance(document, dict) and "resources" in document:
            planned = _template_resources(document, subscription, group, location, given)
        elif isinstance(document, list) or (isinstance(document, dict) and isinstance(document.get("value"), list)):
            planned = _exported_resources(document if isinstance(document, list) else document["value"], group)
        else:
            raise TemplateError("neither an ARM template (no 'resources') nor a list of exported resources")
    except (TemplateError, OSError, ValueError) as error:
        raise CliError("InvalidTemplate", str(error), USAGE_ERROR) from None
    order = {"collection": 0, "job": 1}
    return sorted(planned, key=lambda p: order.get(p.kind, 2))  # stable: template order within a kind


def import_resources(client: ApiClient, subscription: str, document: Any, group: str | None,
                     location: str | None, given: list[str], what_if: bool) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for item in plan_resources(document, subscription, group, location, given):
        if item.kind not in ("collection", "job"):
            outcomes.append(Outcome("ignored", item.kind, item.collection, "not a Microsoft.Scheduler resource"))
            continue
        path = (collection_path(subscription, item.group, item.collection) if item.kind == "collection"
                else job_path(subscription, item.group, item.collection, item.job or ""))
        try:
            try:
                current = client.call("GET", path)
            except CliError as error:
                if error.status != 404:
                    raise
                current = None
            if current is None:
                verdict, detail = "create", ""
            else:
                same, detail = _compare(item, current)
                verdict = "unchanged" if same else "change"
            if not what_if and verdict != "unchanged":
                client.call("PUT", path, item.body)
                verdict = "created" if verdict == "create" else "updated"
            outcomes.append(Outcome(verdict, item.kind, item.label, detail))
        except CliError as error:
            outcomes.append(Outcome("failed", item.kind, item.label, error.line()))
    return outcomes
