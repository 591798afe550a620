"""The store reads and writes; jobstate decides. A module of shared/store may name jobstate's types (the states it
encodes: `GateState`, `Lease`, ...) but imports none of its rules (functions: `acquire`, `pace`, `begun`, ...),
least of all overlap's, concurrency's and pacing's: the executor applies those, through the one ETag
read-modify-write (shared/store/tables.py `read_modify_write`). Every import counts, inside functions too."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
STORE = SHARED / "store"


def _rules(source: str, package: list[str]) -> list[str]:
    """What a module of `package` (["shared", "store", ...]) imports from shared.jobstate that is not a class: a
    rule, or a whole module of them."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("shared.jobstate")]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            module = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module or ""
            for alias in node.names:
                named = f"{module}.{alias.name}"
                if named == "shared.jobstate" or named.startswith("shared.jobstate."):
                    value = getattr(importlib.import_module(module), alias.name, None)
                    if not inspect.isclass(value):
                        found.append(named)
    return found


def test_no_module_of_the_store_imports_a_rule_of_jobstate() -> None:
    rules = {
        str(path.relative_to(SHARED.parent)): found
        for path in sorted(STORE.rglob("*.py"))
        if (found := _rules(path.read_text(), list(path.relative_to(SHARED.parent).parts[:-1])))
    }
    assert rules == {}


def test_the_guard_tells_a_rule_from_a_state() -> None:
    """The store's own way of importing jobstate's states passes; a rule imported the same ways does not."""
    store = ["shared", "store"]
    assert _rules("from ..jobstate.concurrency import GateState, Lease, Waiter", store) == []
    assert _rules("from ..jobstate.overlap import Begun, begun", store) == ["shared.jobstate.overlap.begun"]
    assert _rules("from shared.jobstate.pacing import pace", store) == ["shared.jobstate.pacing.pace"]
    assert _rules("from ..jobstate import acquire", store) == ["shared.jobstate.acquire"]
    assert _rules("from .. import jobstate", store) == ["shared.jobstate"]
    assert _rules("from ...jobstate import concurrency", [*store, "memory"]) == ["shared.jobstate.concurrency"]
    assert _rules("def f():\n    import shared.jobstate.concurrency", store) == ["shared.jobstate.concurrency"]
