"""The docs cite measured figures by where docs/figures.md keeps them, and every such citation resolves.

A citation reads `docs/figures.md, BENCH` or `docs/figures.md, BENCH / PHASE` (issue 41: a figure in the docs has
its source there or a model label). BENCH must be a bench bench/report.py runs (its figures.json name), so a
renamed bench breaks the docs that cite it. PHASE must be one of that bench's phases in docs/figures.json when the
bench has recorded any; a phase written with a placeholder (`kill-run-N`, `steady-<R>`) stands for its numbered
family. A bench that has not recorded yet is only checked by name: figures.md lists it as not measured.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench.report import BENCHES

ROOT = Path(__file__).resolve().parents[2]
CITATION = re.compile(r"docs/figures\.md,\s+([a-z][a-z0-9_]*)(?:\s+/\s+([A-Za-z0-9_.<>-]+))?")


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _citations(text: str) -> list[tuple[str, str | None]]:
    return [(bench, phase.rstrip(".") or None) for bench, phase in CITATION.findall(text)]


def _pattern(phase: str) -> re.Pattern[str]:
    """A cited phase as a pattern over recorded names: `-N` and `<R>` stand for any number."""
    escaped = re.escape(phase).replace(re.escape("<R>"), r"\d+")
    return re.compile(re.sub(r"-N$", r"-\\d+", escaped) + r"\Z")


def _unresolved(text: str, benches: set[str], recorded: dict[str, set[str]]) -> list[str]:
    wrong = []
    for bench, phase in _citations(text):
        if bench not in benches:
            wrong.append(f"{bench}: no such bench in bench/report.py")
        elif phase and bench in recorded and not any(_pattern(phase).match(p) for p in recorded[bench]):
            wrong.append(f"{bench} / {phase}: no such phase in docs/figures.json")
    return wrong


def _recorded() -> dict[str, set[str]]:
    figures = json.loads((ROOT / "docs" / "figures.json").read_text())
    return {name: set(entry.get("phases") or {}) for name, entry in figures.items() if entry.get("phases")}


def test_every_figure_citation_in_the_docs_names_a_bench_and_phase_that_exist() -> None:
    benches = {bench.name for bench in BENCHES}
    recorded = _recorded()
    cited = {doc.name: _citations(doc.read_text()) for doc in _documents()}
    assert cited["execution.md"], "execution.md cites its figures in docs/figures.md"
    wrong = {doc.name: _unresolved(doc.read_text(), benches, recorded) for doc in _documents()}
    assert {name: found for name, found in wrong.items() if found} == {}


def test_the_citation_check_sees_a_wrong_bench_or_phase() -> None:
    benches, recorded = {"fire", "faults", "memory"}, {"fire": {"herd-1000-0.5s"}, "faults": {"kill-run-1"}}
    assert _unresolved("docs/figures.md, fire / herd-1000-0.5s.", benches, recorded) == []
    assert _unresolved("(docs/figures.md, faults /\n  kill-run-N, x)", benches, recorded) == []
    assert _unresolved("docs/figures.md, memory / actions-5000", benches, recorded) == []  # not recorded yet
    assert _unresolved("docs/figures.md, fire / herd-999", benches, recorded) == [
        "fire / herd-999: no such phase in docs/figures.json"
    ]
    assert _unresolved("docs/figures.md, firing", benches, recorded) == ["firing: no such bench in bench/report.py"]
