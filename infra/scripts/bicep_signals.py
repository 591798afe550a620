"""Offline check that the alert rules and the availability test watch signals the app really emits.

Run by infra/check.sh (tree-sitter-bicep, no Bicep CLI, no Azure). It reads every ``.bicep`` under
INFRA_DIR, the workbook's queries, and the names the app's telemetry defines (every string constant of
``shared/telemetry/*.py``, read with ``ast``: nothing of the app is imported), then requires:

  * every ``name == "..."``, ``name in ("...")`` and ``customDimensions["..."]`` in a query (alert rules and
    workbook) is a metric, span or attribute name the app defines: a renamed metric cannot leave a rule
    watching nothing;
  * the dispatcher heartbeat: a log alert on ``scheduler.dispatcher.heartbeats``, evaluated every minute,
    whose threshold is two intervals of the minute timer (120 s);
  * the availability test: a standard web test of ``GET <app>/api/health`` (the anonymous route
    function_app.py serves) expecting 200 and linked to the component, and a metric alert with
    ``WebtestLocationAvailabilityCriteria`` on that very test;
  * per-job silence: a log alert on ``scheduler.job.silence`` split by the job's id;
  * the collection-level "no success since" template: a log alert on ``scheduler.occurrences.succeeded``
    filtered by ``scheduler.collection``;
  * main.bicep deploys every module that holds one of these.

Usage: python bicep_signals.py INFRA_DIR [APP_DIR]   (APP_DIR: where shared/ and function_app.py are, default
INFRA_DIR/..; exit 0 = every signal watched, 1 = problems found)
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import tree_sitter_bicep
from tree_sitter import Language, Node, Parser

PARSER = Parser(Language(tree_sitter_bicep.language()))
LOG_ALERT = "Microsoft.Insights/scheduledQueryRules"
WEB_TEST_CRITERIA = "Microsoft.Azure.Monitor.WebtestLocationAvailabilityCriteria"
WEB_TEST = "Microsoft.Insights/webtests"
METRIC_ALERT = "Microsoft.Insights/metricAlerts"
HEARTBEAT_INTERVAL_SECONDS = 60  # the dispatcher's timer: "0 * * * * *" in function_app.py
_NAME = re.compile(r'\bname\s*==\s*"([^"]+)"')
_NAMES = re.compile(r"\bname\s+in\s*\(([^)]*)\)")
_QUOTED = re.compile(r'"([^"]+)"')
_DIMENSION = re.compile(r'customDimensions\["([^"]+)"\]')


def text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == "'" else value


def walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.named_children:
        yield from walk(child)


def body_of(node: Node) -> Node | None:
    """The object of a declaration, also when written `= if (...) {...}` or `= [for ...: {...}]`."""
    for child in node.named_children:
        if child.type == "object":
            return child
        if child.type in ("if_statement", "for_statement", "array"):
            found = body_of(child)
            if found is not None:
                return found
    return None


def prop(obj: Node | None, *path: str) -> Node | None:
    """The value at a property path of an object literal (None when any step is missing)."""
    for key in path:
        if obj is None or obj.type != "object":
            return None
        obj = next(
            (
                p.named_children[-1]
                for p in obj.named_children
                if p.type == "object_property"
                and len(p.named_children) >= 2
                and unquote(text(p.named_children[0])) == key
            ),
            None,
        )
    return obj


def items(array: Node | None) -> list[Node]:
    return list(array.named_children) if array is not None and array.type == "array" else []


@dataclass
class Template:
    path: Path
    variables: dict[str, str] = field(default_factory=dict)  # name -> the value's text (string content)
    params: dict[str, str] = field(default_factory=dict)  # name -> the default's text ('' when none)
    resources: list[Resource] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)  # module paths as written


@dataclass
class Resource:
    template: Template
    symbol: str
    type: str
    body: Node

    @property
    def where(self) -> str:
        return f"{self.template.path.name}: resource {self.symbol}"

    def expanded(self, node: Node | None) -> str:
        """A value's text with the variables it names spelled out (queries live in variables)."""
        names = {text(n) for n in walk(node)} if node is not None else set()
        named = sorted(names & self.template.variables.keys())
        return "\n".join([text(node), *(self.template.variables[n] for n in named)])

    def number(self, node: Node | None) -> int | None:
        value = text(node)
        if node is not None and node.type == "identifier":
            value = self.template.params.get(value, "")
        return int(value) if value.isdigit() else None


def read_template(path: Path) -> Template:
    root = PARSER.parse(path.read_bytes()).root_node
    found = Template(path)
    for node in root.named_children:
        name = text(node.named_children[0]) if node.named_children else ""
        if node.type == "variable_declaration":
            found.variables[name] = unquote(text(node.named_children[-1]).strip("'"))
        elif node.type == "parameter_declaration":
            default = [c for c in node.named_children[1:] if c.type not in ("type", "decorators")]
            found.params[name] = text(default[-1]) if default and any(c.type == "=" for c in node.children) else ""
        elif node.type == "resource_declaration":
            kind = next((unquote(text(c)) for c in node.named_children if c.type == "string"), "")
            body = body_of(node)
            if body is not None:
                found.resources.append(Resource(found, name, kind.split("@")[0], body))
        elif node.type == "module_declaration":
            found.modules += [unquote(text(c)) for c in node.named_children if c.type == "string"][:1]
    return found


def telemetry_names(app: Path) -> set[str]:
    """Every string constant of shared/telemetry: metric, span and attribute names among them."""
    names: set[str] = set()
    for source in sorted((app / "shared" / "telemetry").glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)
    return names


def workbook_queries(infra: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(infra.rglob("*.json")):
        if path.name.endswith(".parameters.json"):
            continue
        stack = [json.loads(path.read_text(encoding="utf-8"))]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                if isinstance(item.get("query"), str):
                    yield path.name, item["query"]
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)


def log_alerts(resources: list[Resource]) -> Iterator[tuple[Resource, Node, str]]:
    """(rule, criterion, query text) of every log alert criterion."""
    for rule in resources:
        if rule.type == LOG_ALERT:
            for criterion in items(prop(rule.body, "properties", "criteria", "allOf")):
                yield rule, criterion, rule.expanded(prop(criterion, "query"))


def check_names(resources: list[Resource], infra: Path, known: set[str]) -> list[str]:
    queries = [(rule.where, query) for rule, _, query in log_alerts(resources)] + list(workbook_queries(infra))
    problems = []
    for where, query in queries:
        listed = [name for names in _NAMES.findall(query) for name in _QUOTED.findall(names)]
        for name in [*_NAME.findall(query), *listed, *_DIMENSION.findall(query)]:
            if name not in known:
                problems.append(f"{where}: the query names {name!r}, which the app's telemetry does not emit")
    return problems


def find(resources: list[Resource], what: str, test: Callable[[Resource], bool]) -> tuple[list[Resource], list[str]]:
    found = [r for r in resources if test(r)]
    return found, [] if found else [f"missing: {what}"]


def check_heartbeat(resources: list[Resource]) -> tuple[list[Resource], list[str]]:
    def watches(rule: Resource) -> bool:
        every_minute = text(prop(rule.body, "properties", "evaluationFrequency")) == "'PT1M'"
        return every_minute and any(
            '"scheduler.dispatcher.heartbeats"' in query
            and text(prop(criterion, "operator")) == "'GreaterThan'"
            and rule.number(prop(criterion, "threshold")) == 2 * HEARTBEAT_INTERVAL_SECONDS
            for _, criterion, query in log_alerts([rule])
        )

    return find(
        resources,
        "a log alert on scheduler.dispatcher.heartbeats, evaluated every minute (PT1M), "
        f"GreaterThan two intervals ({2 * HEARTBEAT_INTERVAL_SECONDS} s)",
        watches,
    )


def check_availability(resources: list[Resource], app: Path) -> tuple[list[Resource], list[str]]:
    problems = []
    if not re.search(r'route="health",.*auth_level=func\.AuthLevel\.ANONYMOUS', (app / "function_app.py").read_text()):
        problems.append("function_app.py: no anonymous route 'health' for the availability test to ask")

    def tests_health(test: Resource) -> bool:
        properties = prop(test.body, "properties")
        return (
            test.type == WEB_TEST
            and text(prop(test.body, "kind")) == "'standard'"
            and unquote(text(prop(properties, "Request", "RequestUrl"))).endswith("/api/health")
            and text(prop(properties, "ValidationRules", "ExpectedHttpStatusCode")) == "200"
            and "hidden-link:" in text(prop(test.body, "tags"))
        )

    tests, missing = find(
        resources,
        "a standard web test of GET <app>/api/health expecting 200, linked to the component (hidden-link tag)",
        tests_health,
    )
    problems += missing
    symbols = {f"{t.symbol}.id" for t in tests}

    def alerts_on_test(alert: Resource) -> bool:
        criteria = prop(alert.body, "properties", "criteria")
        return (
            alert.type == METRIC_ALERT
            and unquote(text(prop(criteria, "odata.type"))) == WEB_TEST_CRITERIA
            and text(prop(criteria, "webTestId")) in symbols
        )

    alerts, missing = find(
        resources, "a metric alert with WebtestLocationAvailabilityCriteria on the health test", alerts_on_test
    )
    return tests + alerts, problems + missing


def check_silence(resources: list[Resource]) -> tuple[list[Resource], list[str]]:
    def per_job(rule: Resource) -> bool:
        return any(
            '"scheduler.job.silence"' in query
            and 'customDimensions["scheduler.job.id"]' in query
            and "'Job'" in [text(prop(d, "name")) for d in items(prop(criterion, "dimensions"))]
            for _, criterion, query in log_alerts([rule])
        )

    def no_success(rule: Resource) -> bool:
        return any(
            '"scheduler.occurrences.succeeded"' in query and 'customDimensions["scheduler.collection"]' in query
            for _, _, query in log_alerts([rule])
        )

    jobs, missing = find(
        resources, "a log alert on scheduler.job.silence split by the job's id (dimension Job)", per_job
    )
    collections, more = find(
        resources,
        'a "no success since" log alert on scheduler.occurrences.succeeded by scheduler.collection',
        no_success,
    )
    return jobs + collections, missing + more


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    infra = Path(argv[1]).resolve()
    app = Path(argv[2]).resolve() if len(argv) == 3 else infra.parent
    templates = {path.resolve(): read_template(path) for path in sorted(infra.rglob("*.bicep"))}
    resources = [r for t in templates.values() for r in t.resources]
    problems = check_names(resources, infra, telemetry_names(app))
    watching: list[Resource] = []
    for found, missing in (check_heartbeat(resources), check_availability(resources, app), check_silence(resources)):
        watching += found
        problems += missing
    main_bicep = templates.get(infra / "main.bicep")
    deployed = {(infra / "main.bicep").parent.joinpath(m).resolve() for m in (main_bicep.modules if main_bicep else [])}
    for path in sorted({r.template.path.resolve() for r in watching} - deployed - {infra / "main.bicep"}):
        problems.append(f"{path.name}: holds alert rules or tests, but main.bicep does not deploy it")
    for problem in problems:
        print(f"signals: {problem}")
    names = ", ".join(sorted(f"{r.template.path.name}:{r.symbol}" for r in watching))
    print(f"signals: {'FAILED' if problems else 'OK'}: {len(problems)} problem(s); watching: {names}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
