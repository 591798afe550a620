"""The house has floors: every import in shared/ runs down (or across) a floor, and no import closes a circle.

The floors are docs/architecture.md's picture; a module added to shared/ must be given its floor here.
Every import counts, the ones under TYPE_CHECKING and inside functions included: a circle hidden in a
function is still a circle.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"

# Lowest first. A unit is a top-level module or package of shared/.
FLOORS: list[set[str]] = [
    # values and rules of the wire; threads: the process's one pool and its lanes (stdlib and the clock only)
    {"keys", "clock", "manual_clock", "errors", "model", "recurrence", "settings", "timings", "private_targets"}
    | {"retry", "threads", "lanes", "renewer", "group_commit", "collector"},
    {"telemetry", "wire_members"},  # telemetry records only what it is handed
    {"records", "occurrence"},
    {"jobstate"},  # what a job becomes: pure
    {"store", "actions"},  # the only code that talks to Storage / to targets
    {"health", "leases", "guard_protocol", "expectations", "due_jobs", "tick_window"}
    | {"dispatch_report", "spread_plans", "task_run"},
    {"dispatcher", "executor", "first_dispatch"},  # I/O shells of jobstate
    {"runtime"},
    {"lifecycle"},  # I/O shell of jobstate for writes
    {"auth", "retention", "dispatch_trigger"},  # dispatch_trigger: above the dispatcher and the lifecycle it routes to
    {"api", "console"},  # HTTP only
]
FLOOR = {unit: level for level, units in enumerate(FLOORS) for unit in units}


def _module_name(path: Path) -> tuple[str, str]:
    """(module, package it resolves relative imports against)."""
    parts = path.relative_to(SHARED.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        module = ".".join(parts[:-1])
        return module, module
    module = ".".join(parts)
    return module, module.rsplit(".", 1)[0]


def _unit(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _imports() -> dict[str, dict[str, set[str]]]:
    """unit -> unit it imports -> files that do."""
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in SHARED.rglob("*.py"):
        module, package = _module_name(path)
        source = _unit(module)
        if source is None:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                    targets = [stem] if node.module else [f"{stem}.{alias.name}" for alias in node.names]
                else:
                    targets = [node.module or ""]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            for target in targets:
                unit = _unit(target) if target.startswith("shared.") else None
                if unit is not None and unit != source:
                    edges[source][unit].add(str(path.relative_to(SHARED.parent)))
    return edges


def test_every_unit_of_shared_has_a_floor() -> None:
    units = {
        p.stem if p.is_file() else p.name
        for p in SHARED.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())
    }
    assert units - FLOOR.keys() == set(), "give each new module of shared/ its floor (docs/architecture.md)"


def test_no_import_runs_up_a_floor() -> None:
    upward = [
        f"{source} -> {target} ({', '.join(sorted(files))})"
        for source, targets in _imports().items()
        for target, files in targets.items()
        if FLOOR[target] > FLOOR[source]
    ]
    assert upward == []


def test_no_import_closes_a_circle() -> None:
    graph = {source: set(targets) for source, targets in _imports().items()}
    circles: list[list[str]] = []

    def visit(unit: str, trail: list[str]) -> None:
        for target in sorted(graph.get(unit, ())):
            if target in trail:
                circles.append([*trail[trail.index(target) :], target])
            elif len(trail) < len(FLOOR):
                visit(target, [*trail, target])

    for unit in sorted(graph):
        visit(unit, [unit])
    assert circles == []
