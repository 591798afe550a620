"""The repository stands on its own: every document the code, tests and README cite is in the repository.

A citation `wire-contract.md §2.12` must name a section heading of docs/wire-contract.md; a quirk `Q16` or
an open question `[16]` must exist there; nothing may point at documents outside the repository, by name
(`DECISIONS.md`, `../shared`, the `shared/spec` folder beside a checkout) or by path building: a path
climbed from `__file__` (`parents[k]`, `.parent`, `os.path.dirname`, `".."` segments) must stay inside the
repository, so a clean clone has everything the tests read.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
_OUTSIDE = re.compile(
    r"DECISIONS\.md|azure-scheduler-spec|\.\./shared|\bthe digest\b|\bdigest §|\bdigest Q"
    r"|\bshared/spec\b|[\"']shared[\"']\s*/\s*[\"']spec[\"']"  # the spec folder that sits beside a checkout
)


def _sources(*, docs: bool = False) -> list[Path]:
    """The code, tests and README; with `docs`, the documents of docs/ and the build files as well."""
    files = [ROOT / "README.md", ROOT / "function_app.py"]
    folders = ["shared", "tests", "devhost", "bench", "infra", "scheduler_cli"]
    if docs:
        files += [ROOT / name for name in ("Makefile", "pyproject.toml", "azure.yaml")]
        folders.append("docs")
    for folder in folders:
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in {".py", ".md", ".sh", ".bicep"}]
    return [p for p in files if p.is_file() and p != Path(__file__).resolve()]


def _depths(node: ast.expr, file_depth: int) -> list[int] | None:
    """The folder depths (0 = the repository root) a path expression passes through on its way from
    `__file__`, or None when the expression is not a path built from `__file__`."""
    match node:
        case ast.Name(id="__file__"):
            return [file_depth]
        case (
            ast.Call(func=ast.Name(id="Path" | "PurePath"), args=[arg])
            | ast.Call(func=ast.Attribute(attr="Path" | "PurePath" | "abspath" | "realpath" | "normpath"), args=[arg])
        ):
            return _depths(arg, file_depth)
        case ast.Call(func=ast.Attribute(attr="resolve" | "absolute", value=inner)):
            return _depths(inner, file_depth)
        case ast.Call(func=ast.Attribute(attr="dirname"), args=[inner]) | ast.Attribute(attr="parent", value=inner):
            steps = _depths(inner, file_depth)
            return None if steps is None else [*steps, steps[-1] - 1]
        case ast.Subscript(value=ast.Attribute(attr="parents", value=inner), slice=ast.Constant(value=int(k))):
            steps = _depths(inner, file_depth)
            return None if steps is None else [*steps, steps[-1] - k - 1]
        case ast.BinOp(op=ast.Div(), left=inner, right=ast.Constant(value=str(part))):
            return _descend(_depths(inner, file_depth), [part])
        case ast.Call(func=ast.Attribute(attr="join" | "joinpath"), args=[inner, *parts]):
            named = [p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)]
            return _descend(_depths(inner, file_depth), named)
    return None


def _descend(steps: list[int] | None, parts: list[str]) -> list[int] | None:
    if steps is None:
        return None
    for segment in (s for part in parts for s in part.split("/") if s not in ("", ".")):
        steps = [*steps, steps[-1] - 1 if segment == ".." else steps[-1] + 1]
    return steps


def _climbs_out(path: Path) -> list[int]:
    """The lines of a Python file that build a path from `__file__` reaching above the repository root."""
    file_depth = len(path.relative_to(ROOT).parts)  # the file itself; its folder is one less
    return sorted(
        {
            node.lineno
            for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.expr) and min(_depths(node, file_depth) or [0]) < 0
        }
    )


def test_no_path_climbs_out_of_the_repository() -> None:
    offending = [f"{p.relative_to(ROOT)}:{n}" for p in _sources(docs=True) if p.suffix == ".py" for n in _climbs_out(p)]
    assert offending == []


def test_the_path_check_sees_a_climb_out() -> None:
    """The check itself: the repository root is parents[2] of tests/docs/x.py; one more level is outside."""
    probe = ROOT / "tests" / "docs" / "probe.py"
    cases = {
        "Path(__file__).resolve().parents[2] / 'docs'": False,
        "Path(__file__).parent.parent / 'x'": False,
        "os.path.join(os.path.dirname(__file__), '..', '..', 'docs')": False,
        "Path(__file__).parents[3] / 'shared' / 'spec' / 'x.json'": True,
        "Path(__file__).resolve().parent.parent.parent.parent / 'x'": True,
        "Path(__file__).parent / '../../../shared'": True,
        "os.path.join(os.path.dirname(__file__), '..', '..', '..')": True,
    }
    for source, outside in cases.items():
        tree = ast.parse(source, mode="eval")
        depths = _depths(tree.body, len(probe.relative_to(ROOT).parts))
        assert depths is not None, source
        assert (min(depths) < 0) is outside, source
    assert _OUTSIDE.search('ROOT / "shared" / "spec" / "x.json"') and _OUTSIDE.search("see ../shared/spec/x")
    assert not _OUTSIDE.search('__slots__ = ("epoch", "spec")') and not _OUTSIDE.search("from shared.store import x")


def test_no_reference_points_outside_the_repository() -> None:
    offending = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in _sources(docs=True)
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if _OUTSIDE.search(line)
    ]
    assert offending == []


def test_every_cited_section_of_the_wire_contract_exists() -> None:
    contract = (DOCS / "wire-contract.md").read_text()
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)[ .]", contract, re.MULTILINE))
    quirks = set(re.findall(r"^- \*\*(Q\d+)\*\*", contract, re.MULTILINE))
    citation = re.compile(r"wire-contract\.md (?:§(\d+(?:\.\d+)?)|(Q\d+))")
    cited = {
        section or quirk for path in _sources() for section, quirk in citation.findall(path.read_text(errors="replace"))
    }
    assert cited, "the code cites the wire contract"
    assert cited <= sections | quirks, cited - sections - quirks


def test_every_cited_section_of_the_decisions_exists() -> None:
    headings = set(re.findall(r"^#{2,3} (.+)$", (DOCS / "decisions.md").read_text(), re.MULTILINE))
    cited = {
        name
        for path in _sources()
        for name in re.findall(r'decisions\.md,? \(?"([^"]+)"', path.read_text(errors="replace"))
    }
    assert cited and cited <= headings, cited - headings
