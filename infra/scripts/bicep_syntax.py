"""Offline Bicep syntax and wiring check (no Bicep CLI needed), run by infra/check.sh.

For every ``.bicep`` file under the given folder:
  * parse it with tree-sitter-bicep and report every ERROR / MISSING node as
    ``path:line:col``;
and across the files:
  * every ``module x '<path>'`` points to an existing file, passes only parameters that
    file declares and every parameter it declares without a default;
  * every ``<name>.parameters.json`` next to ``<name>.bicep`` sets only declared
    parameters, sets every required one, and never allows a CORS origin of ``*``.

Usage: python bicep_syntax.py INFRA_DIR        (exit 0 = clean, 1 = problems found)
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tree_sitter_bicep
from tree_sitter import Language, Node, Parser

PARSER = Parser(Language(tree_sitter_bicep.language()))


@dataclass
class BicepFile:
    path: Path
    params: dict[str, bool] = field(default_factory=dict)  # name -> has a default value
    modules: list[tuple[int, str, dict[str, int]]] = field(default_factory=list)  # (line, path, {param: line})


def text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def line_of(node: Node) -> int:
    return node.start_point[0] + 1


def syntax_errors(path: Path, root: Node) -> list[str]:
    errors: list[str] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            row, col = node.start_point
            errors.append(f"{path}:{row + 1}:{col + 1}: syntax error: missing {node.type!r}")
        elif node.is_error:
            row, col = node.start_point
            snippet = " ".join(text(node).split())[:60]
            errors.append(f"{path}:{row + 1}:{col + 1}: syntax error near {snippet!r}")
        stack.extend(reversed(node.children))
    return sorted(set(errors), key=lambda e: (e.split(":")[0], int(e.split(":")[1]), int(e.split(":")[2])))


def unquote(node: Node) -> str:
    value = text(node)
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1]
    return value


def first_object(node: Node) -> Node | None:
    """The body object of a declaration, also when written as `= if (cond) { ... }`."""
    for child in node.named_children:
        if child.type == "object":
            return child
    for child in node.named_children:
        if child.type in ("if_statement", "for_statement"):
            found = first_object(child)
            if found is not None:
                return found
    return None


def object_properties(obj: Node) -> dict[str, Node]:
    props: dict[str, Node] = {}
    for prop in obj.named_children:
        if prop.type != "object_property" or not prop.named_children:
            continue
        key = prop.named_children[0]
        props[unquote(key)] = prop
    return props


def collect(path: Path, root: Node) -> BicepFile:
    info = BicepFile(path)
    for node in root.named_children:
        if node.type == "parameter_declaration":
            name = node.named_children[0]
            has_default = any(child.type == "=" for child in node.children)
            info.params[text(name)] = has_default
        elif node.type == "module_declaration":
            strings = [c for c in node.named_children if c.type == "string"]
            body = first_object(node)
            passed: dict[str, int] = {}
            if body is not None and "params" in object_properties(body):
                value = object_properties(body)["params"].named_children[-1]
                if value.type == "object":
                    passed = {k: line_of(v) for k, v in object_properties(value).items()}
            if strings:
                info.modules.append((line_of(node), unquote(strings[0]), passed))
    return info


def check_modules(files: dict[Path, BicepFile]) -> list[str]:
    problems: list[str] = []
    for info in files.values():
        for line, rel, passed in info.modules:
            target = (info.path.parent / rel).resolve()
            if target not in files:
                problems.append(f"{info.path}:{line}: module path {rel!r} is not a .bicep file under infra/")
                continue
            declared = files[target].params
            for name, name_line in passed.items():
                if name not in declared:
                    problems.append(f"{info.path}:{name_line}: module {rel!r} has no parameter {name!r}")
            for name, has_default in declared.items():
                if not has_default and name not in passed:
                    problems.append(f"{info.path}:{line}: module {rel!r} needs parameter {name!r}")
    return problems


def check_parameter_files(folder: Path, files: dict[Path, BicepFile]) -> list[str]:
    problems: list[str] = []
    for params_file in sorted(folder.rglob("*.parameters.json")):
        template = params_file.with_name(params_file.name.replace(".parameters.json", ".bicep")).resolve()
        if template not in files:
            problems.append(f"{params_file}: no matching template {template.name}")
            continue
        try:
            document = json.loads(params_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(f"{params_file}: not valid JSON: {exc}")
            continue
        values = document.get("parameters")
        if not isinstance(values, dict):
            problems.append(f"{params_file}: no 'parameters' object")
            continue
        declared = files[template].params
        for name, entry in values.items():
            if name not in declared:
                problems.append(f"{params_file}: parameter {name!r} is not declared in {template.name}")
            if not isinstance(entry, dict) or not ({"value", "reference"} & entry.keys()):
                problems.append(f"{params_file}: parameter {name!r} needs a 'value' (or 'reference')")
        for name, has_default in declared.items():
            if not has_default and name not in values:
                problems.append(f"{params_file}: required parameter {name!r} of {template.name} is not set")
        origins = values.get("corsAllowedOrigins", {}).get("value", [])
        if not isinstance(origins, list) or any(str(o).strip() == "*" for o in origins):
            problems.append(f"{params_file}: corsAllowedOrigins must be a list of explicit origins, never '*'")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(argv[1]).resolve()
    paths = sorted(folder.rglob("*.bicep"))
    if not paths:
        print(f"syntax: FAILED: no .bicep files under {folder}")
        return 1
    problems: list[str] = []
    files: dict[Path, BicepFile] = {}
    for path in paths:
        root = PARSER.parse(path.read_bytes()).root_node
        shown = path.relative_to(folder.parent)
        errors = syntax_errors(shown, root)
        problems.extend(errors)
        if not errors and not root.named_children:
            problems.append(f"{shown}: empty template")
        info = collect(path, root)
        files[path] = info
    problems.extend(check_modules(files))
    problems.extend(check_parameter_files(folder, files))
    for problem in problems:
        print(problem.replace(str(folder.parent) + "/", ""))
    status = "FAILED" if problems else "OK"
    print(f"syntax: {status}: {len(paths)} .bicep files parsed with tree-sitter-bicep, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
