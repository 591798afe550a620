"""What an API handler reads of its request, found in the source of shared/api (ast): query parameters and headers.

A read, as shared/api writes them:
- a query parameter: `query_value(request, NAME)` (common.py), or a call of a function that hands one of its own
  parameters on as that NAME (paging.py's `_non_negative_int(request, "$top")`), to any depth;
- a header: a name compared with `==` to a lower-cased key, in a function that touches `.headers` (what_if.py's
  `x-ms-what-if`, common.py's `content-type`).
NAME is a string literal or a module constant. A handler reaches every function of shared/api that its body
names (`f`, `module.f`, through `from .module import f`), and every function those name, to any depth: a read
on any branch counts, whichever api-version takes it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

API = Path(__file__).resolve().parents[2] / "shared" / "api"
_BASE_READER = (("common", "query_value"), 1, "name")  # (function, position of the name, its keyword)

Function = tuple[str, str]  # (module of shared/api, function name)


@dataclass
class _Module:
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (module, name there)
    modules: dict[str, str] = field(default_factory=dict)  # `from . import paths`: alias -> module


@cache
def _modules() -> dict[str, _Module]:
    found: dict[str, _Module] = {}
    for path in API.glob("*.py"):
        module = found.setdefault(path.stem, _Module())
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef):
                module.functions[node.name] = node
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                if isinstance(node.value.value, str) and isinstance(node.targets[0], ast.Name):
                    module.constants[node.targets[0].id] = node.value.value
            elif isinstance(node, ast.ImportFrom) and node.level == 1:
                for alias in node.names:
                    if node.module:
                        module.imported[alias.asname or alias.name] = (node.module, alias.name)
                    else:
                        module.modules[alias.asname or alias.name] = alias.name
    return found


def _lookup(module: str, name: str, kind: Callable[[_Module], dict[str, object]]) -> tuple[str, str] | None:
    """Where `name`, as `module` sees it, is defined (following imports), if it is one of `kind`."""
    mods = _modules()
    while module in mods:
        if name in kind(mods[module]):
            return module, name
        if name not in mods[module].imported:
            return None
        module, name = mods[module].imported[name]
    return None


def _function(module: str, node: ast.AST) -> Function | None:
    if isinstance(node, ast.Name):
        return _lookup(module, node.id, lambda m: dict(m.functions))
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        target = _modules()[module].modules.get(node.value.id)
        return _lookup(target, node.attr, lambda m: dict(m.functions)) if target else None
    return None


def _text(module: str, node: ast.AST | None) -> str | None:
    """A string literal, or a module constant's value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        found = _lookup(module, node.id, lambda m: dict(m.constants))
        return _modules()[found[0]].constants[found[1]] if found else None
    return None


def _argument(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _all_functions() -> list[tuple[Function, ast.FunctionDef]]:
    return [((name, f), node) for name, module in _modules().items() for f, node in module.functions.items()]


@cache
def _readers() -> dict[Function, tuple[int, str]]:
    """The functions that read the query parameter one of their arguments names: query_value and its wrappers."""
    readers = {_BASE_READER[0]: _BASE_READER[1:]}
    changed = True
    while changed:
        changed = False
        for function, node in _all_functions():
            params = [a.arg for a in node.args.args]
            for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
                target = _function(function[0], call.func)
                if target not in readers or function in readers:
                    continue
                argument = _argument(call, *readers[target])
                if isinstance(argument, ast.Name) and argument.id in params:
                    readers[function] = (params.index(argument.id), argument.id)
                    changed = True
    return readers


def _own_reads(function: Function, node: ast.FunctionDef) -> set[str]:
    module, readers = function[0], _readers()
    reads: set[str] = set()
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        target = _function(module, call.func)
        if target in readers and (name := _text(module, _argument(call, *readers[target]))) is not None:
            reads.add(name)
    if any(isinstance(n, ast.Attribute) and n.attr == "headers" for n in ast.walk(node)):
        for compare in (n for n in ast.walk(node) if isinstance(n, ast.Compare)):
            if len(compare.ops) != 1 or not isinstance(compare.ops[0], ast.Eq):
                continue
            sides = [compare.left, compare.comparators[0]]
            if any(
                isinstance(s, ast.Call) and isinstance(s.func, ast.Attribute) and s.func.attr == "lower" for s in sides
            ):
                reads |= {text.lower() for s in sides if (text := _text(module, s)) is not None}
    return reads


def request_reads(handler: Callable[..., object]) -> set[str]:
    """The query parameters (as named) and headers (lower case) that `handler`, a function of shared/api, reads."""
    start: Function = (handler.__module__.rsplit(".", 1)[1], handler.__name__)
    seen: set[Function] = set()
    todo = [start]
    reads: set[str] = set()
    while todo:
        function = todo.pop()
        if function in seen:
            continue
        seen.add(function)
        node = _modules()[function[0]].functions[function[1]]
        reads |= _own_reads(function, node)
        todo += [f for n in ast.walk(node) if (f := _function(function[0], n)) is not None]
    return reads
