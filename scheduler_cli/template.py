"""From an ARM template (or an exported resource list) to the Microsoft.Scheduler resources to apply, offline,
with every problem of the document reported at once.

Contract: `plan(document, scope, given, sets, ask)` answers the `Planned` resources in document order, or
raises `TemplateProblems` listing every problem found (nothing is written then):
- Parameters come from `given` (`name=value`, or a parameters file `{"parameters": {"x": {"value": ...}}}`),
  else their `defaultValue`. A parameter is evaluated only when a Microsoft.Scheduler resource reads it, so
  one that only ignored resources use (an App Service plan's name) is never required; `allowedValues` are
  checked when it is read. Ignored resources are listed by name, evaluated leniently.
- `sets` (`--set PATH=TEXT` or `--set PATH:=JSON`) replace the value at PATH of the template before anything
  is evaluated; PATH is written as problems name it (`resources[2].resources[0].properties.action.request.uri`,
  `variables.key`, `parameters.x.defaultValue`). A text starting with `[` stays a literal (ARM's `[[`).
  This is how a value an offline import cannot compute (`reference()`, `listKeys()`, an unsupported
  function) is supplied.
- `ask(where, expression)`, when given, is asked for a secret the template reads from a deployed resource
  (`listKeys(...).primaryKey`): an answer becomes the value; None leaves it a problem.
- Exported lists (a JSON array or `{"value": [...]}`): each resource keeps the resource group of its id
  unless a group is given; read-only `status` is dropped.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .arm_expressions import Deferred, Evaluator, Scope, TemplateError, Unresolvable

COLLECTION_TYPE = "microsoft.scheduler/jobcollections"
JOB_TYPE = "microsoft.scheduler/jobcollections/jobs"
_ID = re.compile(
    r"/subscriptions/[^/]+/resourceGroups/(?P<group>[^/]+)/providers/Microsoft\.Scheduler/"
    r"jobCollections/(?P<collection>[^/]+)(?:/jobs/(?P<job>[^/]+))?$",
    re.IGNORECASE,
)
_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")
_FAILED = object()  # a value that could not be resolved (its problem is recorded)
Ask = Callable[[str, str], str | None]


@dataclass
class Planned:
    kind: str  # "collection" | "job" | the ignored resource's type
    group: str
    collection: str
    job: str | None
    body: dict[str, Any]
    where: str = ""  # the resource's path in the template (resources[0].resources[1])

    @property
    def label(self) -> str:
        return "/".join(p for p in (self.group, self.collection, self.job) if p)


class TemplateProblems(Exception):
    """Every problem of a template, each one line naming where it is."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class _Problems:
    items: list[str] = field(default_factory=list)

    def add(self, message: str) -> None:
        if message not in self.items:
            self.items.append(message)


def _steps(path: str) -> list[str | int] | None:
    steps: list[str | int] = []
    at = 0
    while at < len(path):
        m = _STEP.match(path, at)
        if not m or (at == 0 and path.startswith(".")):
            return None
        steps.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        at = m.end()
    return steps or None


def _literal(value: Any) -> Any:
    """Supplied data is never evaluated: a string that looks like an expression is escaped as ARM does."""
    if isinstance(value, str):
        return f"[{value}" if value.startswith("[") else value
    if isinstance(value, list):
        return [_literal(v) for v in value]
    if isinstance(value, dict):
        return {k: _literal(v) for k, v in value.items()}
    return value


def apply_sets(template: dict[str, Any], sets: list[str], problems: _Problems) -> dict[str, Any]:
    """A copy of the template with each `PATH=TEXT` / `PATH:=JSON` applied."""
    result = copy.deepcopy(template)
    for item in sets:
        path, sep, text = item.partition("=")
        if not sep or not path.strip():
            problems.add(f"--set {item}: write PATH=TEXT or PATH:=JSON")
            continue
        as_json = path.endswith(":")
        path = path[:-1] if as_json else path
        try:
            value = json.loads(text) if as_json else text
        except ValueError as error:
            problems.add(f"--set {path}:=...: not JSON ({error})")
            continue
        steps = _steps(path.strip())
        if steps is None:
            problems.add(f"--set {path}: not a path such as resources[0].properties.action.request.uri")
            continue
        node: Any = result
        for depth, step in enumerate(steps):
            last = depth == len(steps) - 1
            if isinstance(step, int):
                if not isinstance(node, list) or step >= len(node):
                    problems.add(f"--set {path}: the template has no {_shown(steps[: depth + 1])}")
                    break
                if last:
                    node[step] = _literal(value)
                node = node[step]
                continue
            if not isinstance(node, dict):
                problems.add(f"--set {path}: the template has no {_shown(steps[: depth + 1])}")
                break
            key = next((k for k in node if k == step), None) or next(
                (k for k in node if k.lower() == step.lower()), None
            )
            if last:
                node[key or step] = _literal(value)
            elif key is None:
                problems.add(f"--set {path}: the template has no {_shown(steps[: depth + 1])}")
                break
            else:
                node = node[key]
    return result


def _shown(steps: list[str | int]) -> str:
    return "".join(f"[{s}]" if isinstance(s, int) else (f".{s}" if i else s) for i, s in enumerate(steps))


def _given_values(declared: dict[str, Any], given: list[str], problems: _Problems) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for item in given:
        if "=" not in item:
            try:
                document = json.loads(Path(item).read_text("utf-8"))
            except (OSError, ValueError) as error:
                problems.add(f"--parameter {item}: not a name=value pair nor a readable parameters file ({error})")
                continue
            entries = document.get("parameters", document) if isinstance(document, dict) else {}
            values.update(
                {
                    k: (v.get("value") if isinstance(v, dict) and "value" in v else v)
                    for k, v in entries.items()
                    if k not in ("$schema", "contentVersion")
                }
            )
            continue
        name, _, text = item.partition("=")
        spec = next((v for k, v in declared.items() if k.lower() == name.lower()), None) or {}
        kind = str(spec.get("type", "string")).lower() if isinstance(spec, dict) else "string"
        try:
            values[name] = (
                int(text)
                if kind == "int"
                else text.lower() == "true"
                if kind == "bool"
                else json.loads(text)
                if kind in ("object", "array", "secureobject")
                else text
            )
        except ValueError:
            problems.add(f"--parameter {name}: '{text}' is not a valid {kind}")
    unknown = [n for n in values if n.lower() not in {d.lower() for d in declared}]
    if unknown:
        problems.add(f"--parameter: the template declares no parameter {', '.join(sorted(unknown))}")
    return values


def _parameters(evaluator: Evaluator, declared: dict[str, Any], supplied: dict[str, Any]) -> None:
    """Every declared parameter, Deferred: its value, its default or its absence matter only when read."""
    lowered = {k.lower(): v for k, v in supplied.items()}

    def compute(name: str, spec: Any) -> Any:
        if name.lower() in lowered:
            value = lowered[name.lower()]
        elif isinstance(spec, dict) and "defaultValue" in spec:
            value = evaluator.resolve(spec["defaultValue"], f"parameters.{name}.defaultValue")
        else:
            raise TemplateError(f"parameters.{name}: no value; pass --parameter {name}=VALUE")
        allowed = spec.get("allowedValues") if isinstance(spec, dict) else None
        if allowed and value not in allowed:
            raise TemplateError(f"parameters.{name}: '{value}' is not one of {allowed}")
        return value

    for name, spec in declared.items():
        evaluator.parameters[name] = Deferred(functools.partial(compute, name, spec))


def _resolve(evaluator: Evaluator, value: Any, where: str, problems: _Problems, ask: Ask | None) -> Any:
    """`value` with every expression resolved; each leaf that fails is recorded and stands as _FAILED."""
    if isinstance(value, dict):
        return {k: _resolve(evaluator, v, f"{where}.{k}", problems, ask) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(evaluator, v, f"{where}[{i}]", problems, ask) for i, v in enumerate(value)]
    try:
        return evaluator.resolve(value, where)
    except Unresolvable as error:
        answer = ask(error.where, str(value)) if ask is not None and error.secret and error.where == where else None
        if answer:
            return answer
        problems.add(str(error))
    except TemplateError as error:
        problems.add(str(error))
    return _FAILED


def _failed(value: Any) -> bool:
    if value is _FAILED:
        return True
    if isinstance(value, dict):
        return any(_failed(v) for v in value.values())
    if isinstance(value, list):
        return any(_failed(v) for v in value)
    return False


def _lenient(evaluator: Evaluator, value: Any, where: str) -> str:
    try:
        return str(evaluator.resolve(value, where))
    except TemplateError:
        return str(value)


def _template(
    template: dict[str, Any], scope: Scope, given: list[str], sets: list[str], ask: Ask | None, problems: _Problems
) -> list[Planned]:
    template = apply_sets(template, sets, problems)
    declared = template.get("parameters") or {}
    evaluator = Evaluator({}, template.get("variables") or {}, scope)
    _parameters(evaluator, declared, _given_values(declared, given, problems))
    planned: list[Planned] = []

    def walk(resources: Any, parent_type: str, parent_name: str, where: str) -> None:
        items = list(resources.values()) if isinstance(resources, dict) else list(resources or [])
        for index, resource in enumerate(items):
            at = f"{where}[{index}]"
            if not isinstance(resource, dict):
                problems.add(f"{at}: a resource must be an object")
                continue
            kind = _resolve(evaluator, resource.get("type", ""), f"{at}.type", problems, None)
            if kind is _FAILED:
                continue
            kind = str(kind)
            relative = bool(parent_type) and "/" not in kind and not kind.lower().startswith("microsoft.")
            if relative:  # a child declared inside its parent: type and name are relative to the parent's
                kind = f"{parent_type}/{kind}"
            ours = kind.lower() in (COLLECTION_TYPE, JOB_TYPE)
            if not ours:  # ignored: its name is shown as far as it resolves; nothing of it is required
                name = _lenient(evaluator, resource.get("name", ""), f"{at}.name")
                planned.append(Planned(kind, scope.group or "", name, None, {}, at))
                if resource.get("resources"):
                    walk(resource["resources"], kind, name, f"{at}.resources")
                continue
            if "copy" in resource:
                problems.add(f"{at}.copy: copy loops are not supported; list the resources one by one")
                continue
            if "condition" in resource:
                condition = _resolve(evaluator, resource["condition"], f"{at}.condition", problems, None)
                if condition is not _FAILED and not condition:
                    continue
            name = _resolve(evaluator, resource.get("name", ""), f"{at}.name", problems, None)
            body = {
                k: _resolve(evaluator, resource[k], f"{at}.{k}", problems, ask)
                for k in ("location", "tags", "properties")
                if k in resource
            }
            if name is _FAILED:  # its problems are recorded; its children are still read for theirs
                name = _lenient(evaluator, resource.get("name", ""), f"{at}.name")
            else:
                name = str(name)
                if relative and "/" not in name:
                    name = f"{parent_name}/{name}"
                try:
                    item = _planned(kind, name, scope.group, body, at)
                    if not _failed(body):
                        planned.append(item)
                except TemplateError as error:
                    problems.add(str(error))
            if resource.get("resources"):
                walk(resource["resources"], kind, name, f"{at}.resources")

    walk(template.get("resources"), "", "", "resources")
    return planned


def _planned(kind: str, name: str, group: str | None, body: dict[str, Any], where: str) -> Planned:
    lowered = kind.lower()
    if isinstance(body.get("properties"), dict):  # read-only status of an export is not part of the definition
        body["properties"] = {k: v for k, v in body["properties"].items() if k.lower() != "status"}
    if lowered not in (COLLECTION_TYPE, JOB_TYPE):
        return Planned(kind, group or "", name, None, {}, where)
    if not group:
        raise TemplateError(f"{where}: pass --resource-group for the template's resources")
    parts = name.split("/")
    if lowered == COLLECTION_TYPE and len(parts) == 1:
        return Planned("collection", group, parts[0], None, body, where)
    if lowered == JOB_TYPE and len(parts) == 2:
        return Planned("job", group, parts[0], parts[1], body, where)
    raise TemplateError(f"{where}.name: '{name}' does not fit the type {kind}")


def _exported(items: list[Any], group: str | None, problems: _Problems) -> list[Planned]:
    planned: list[Planned] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            problems.add(f"[{index}]: a resource must be an object")
            continue
        kind = str(item.get("type", ""))
        found = _ID.search(str(item.get("id", "")))
        body = {k: copy.deepcopy(item[k]) for k in ("location", "tags", "properties") if k in item}
        try:
            if kind.lower() in (COLLECTION_TYPE, JOB_TYPE) and found:
                name = found["collection"] + (f"/{found['job']}" if found["job"] else "")
                planned.append(_planned(kind, name, group or found["group"], body, f"[{index}]"))
            else:
                planned.append(_planned(kind, str(item.get("name", "")), group, body, f"[{index}]"))
        except TemplateError as error:
            problems.add(str(error))
    return planned


def plan(document: Any, scope: Scope, given: list[str], sets: list[str], ask: Ask | None = None) -> list[Planned]:
    """The resources of a template or export, in document order; TemplateProblems lists every problem."""
    problems = _Problems()
    if isinstance(document, dict) and "resources" in document:
        planned = _template(document, scope, given, sets, ask, problems)
    elif isinstance(document, list) or (isinstance(document, dict) and isinstance(document.get("value"), list)):
        if sets:
            problems.add("--set applies to templates; edit the exported list instead")
        planned = _exported(document if isinstance(document, list) else document["value"], scope.group, problems)
    else:
        problems.add("neither an ARM template (no 'resources') nor a list of exported resources")
        planned = []
    if problems.items:
        raise TemplateProblems(problems.items)
    return planned
