"""The repository stands on its own: every document the code, tests and README cite is in the repository.

A citation `wire-contract.md §2.12` must name a section heading of docs/wire-contract.md; a quirk `Q16` or
an open question `[16]` must exist there; nothing may point at documents outside the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
_OUTSIDE = re.compile(r"DECISIONS\.md|azure-scheduler-spec|\.\./shared|\bthe digest\b|\bdigest §|\bdigest Q")


def _sources() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "function_app.py"]
    for folder in ("shared", "tests", "devhost", "bench", "infra"):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in {".py", ".md", ".sh", ".bicep"}]
    return [p for p in files if p.is_file() and p != Path(__file__).resolve()]


def test_no_reference_points_outside_the_repository() -> None:
    offending = [f"{p.relative_to(ROOT)}:{n}" for p in _sources()
                 for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if _OUTSIDE.search(line)]
    assert offending == []


def test_every_cited_section_of_the_wire_contract_exists() -> None:
    contract = (DOCS / "wire-contract.md").read_text()
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)[ .]", contract, re.MULTILINE))
    quirks = set(re.findall(r"^- \*\*(Q\d+)\*\*", contract, re.MULTILINE))
    citation = re.compile(r"wire-contract\.md (?:§(\d+(?:\.\d+)?)|(Q\d+))")
    cited = {section or quirk for path in _sources()
             for section, quirk in citation.findall(path.read_text(errors="replace"))}
    assert cited, "the code cites the wire contract"
    assert cited <= sections | quirks, cited - sections - quirks


def test_every_cited_section_of_the_decisions_exists() -> None:
    headings = set(re.findall(r"^#{2,3} (.+)$", (DOCS / "decisions.md").read_text(), re.MULTILINE))
    cited = {name for path in _sources()
             for name in re.findall(r'decisions\.md,? \(?"([^"]+)"', path.read_text(errors="replace"))}
    assert cited and cited <= headings, cited - headings
