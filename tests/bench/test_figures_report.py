"""docs/figures.md and docs/figures.json: the page rendered from a small figures file (no bench runs), `record`
merging a bench's entry into an existing file, and bench/report.py running stand-in benches (tiny scripts that
record or fail) so that a failed bench keeps its earlier entry, with its own commit, marked not re-run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import figures as figures_module
from bench.figures_page import render
from bench.report import BENCHES, Bench, main, run_bench

ROOT = Path(__file__).resolve().parents[2]
ORDER = [b.name for b in BENCHES]


def _entry(commit: str, phases: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "commit": commit,
        "date": "2026-11-29T14:00:00Z",
        "machine": {"cores": 2, "load_before": 0.31, "load_after": 1.92, "python": "3.12.3"},
        "command": f".venv/bin/python bench/{commit}.py",
        "seconds": 312.5,
        "raw": {},
        "phases": phases,
        **more,
    }


HERD = {
    "executions": 1000,
    "lost": 0,
    "duplicated": 0,
    "early": 0,
    "lateness_s": {"p50": 0.61, "p99": 0.91, "max": 1.02, "min": 0.5},
    "storage_requests_per_execution": 1.05,
    "storage_requests_by_kind": {"GET schedulerJobs": 0.05, "POST $batch": 0.6, "DELETE scheduler-due": 0.4},
    "invocations_per_execution": 0.026,
    "host_cpu_ms_per_execution": 2.4,
    "host_rss_mb": 170.0,
    "count_window_started_late": False,
}
FIGURES: dict[str, Any] = {
    "fire": _entry(
        "fire111",
        {"herd-1000-0.5s": HERD, "herd-300": {**HERD, "executions": 300}, "create": {"jobs": 1300, "seconds": 40.2}},
    ),
    "idle": _entry(
        "idle222",
        {"idle": {"storage_requests_per_hour": 1200.0, "storage_requests_by_kind_per_hour": {"GET x-queue": 900.0}}},
        raw={"entity_read_p50_ms": 1.1},
    ),
    "steady": _entry(
        "steady333",
        {
            "steady-100": {
                "executions": 18000,
                "lateness_s": {"p50": 0.02, "p99": 0.36, "max": 0.8},
                "by_minute": [
                    {"minute": 1, "arrived": 6000, "lateness_s": {"p99": 0.3}},
                    {"minute": 2, "arrived": 6000, "lateness_s": {"p99": 0.4}},
                ],
            }
        },
        last_failure={"date": "2026-12-01T09:00:00Z", "commit": "new9999", "exit": 1, "reason": "exit status 1"},
    ),
}


def _sections(page: str) -> dict[str, str]:
    return {part.split("\n", 1)[0]: part for part in page.split("\n## ")[1:]}


def test_the_page_states_how_to_regenerate_it_and_gives_each_bench_its_own_provenance() -> None:
    page = render(FIGURES, ORDER)
    head = page.split("\n## ")[0]
    assert "`make bench`" in head and "bench/report.py --only NAME" in head and "`--render`" in head
    assert "its own commit, date, machine and command" in head
    sections = _sections(page)
    assert list(sections) == ["idle", "steady", "fire"]  # the order the benches run in
    for name, commit in (("idle", "idle222"), ("steady", "steady333"), ("fire", "fire111")):
        assert f"- commit: {commit}, date: 2026-11-29T14:00:00Z" in sections[name]
        assert [c for c in ("idle222", "steady333", "fire111") if c in sections[name]] == [commit]
        assert "- machine: 2 cores, load 0.31 before and 1.92 after" in sections[name]
        assert f"- command: `.venv/bin/python bench/{commit}.py`" in sections[name]
        assert "- wall time: 312 s (5.2 min)" in sections[name]
    assert "- raw storage in the same run: `entity_read_p50_ms` 1.10" in sections["idle"]
    assert "- raw storage in the same run: not measured" in sections["fire"]
    assert "Not measured yet: recurrence, api," in page


def test_a_bench_not_re_run_keeps_its_own_commit_and_says_so() -> None:
    sections = _sections(render(FIGURES, ORDER))
    steady = sections["steady"]
    assert "**Not re-run**: the run of 2026-12-01T09:00:00Z (commit new9999) failed (exit status 1)" in steady
    assert "- commit: steady333," in steady and "earlier run" in steady
    assert "Not re-run" not in sections["fire"]
    assert "| [steady](#steady) (not re-run: its last run failed) | steady333 |" in render(FIGURES, ORDER)


def test_each_phase_has_a_table_of_its_figures_in_natural_order() -> None:
    fire = _sections(render(FIGURES, ORDER))["fire"]
    assert fire.index("### fire / create") < fire.index("### fire / herd-300") < fire.index("### fire / herd-1000")
    overview = fire[fire.index("| phase |") :].split("\n\n")[0].splitlines()
    assert overview[0] == (
        "| phase | executions | lost | duplicated | early | lateness p50 s | p99 s | max s | "
        "storage requests / execution | invocations / execution | host CPU ms / execution | host RSS MB |"
    )
    assert overview[2:] == [
        "| herd-300 | 300 | 0 | 0 | 0 | 0.610 | 0.910 | 1.02 | 1.05 | 0.026 | 2.40 | 170 |",
        "| herd-1000-0.5s | 1,000 | 0 | 0 | 0 | 0.610 | 0.910 | 1.02 | 1.05 | 0.026 | 2.40 | 170 |",
    ]
    herd = fire[fire.index("### fire / herd-1000-0.5s") :]
    rows = [line for line in herd.splitlines() if line.startswith("| `")]
    assert rows[:2] == ["| `executions` | 1,000 |", "| `lost` | 0 |"]  # the headline figures first
    assert "| `lateness_s.p99` | 0.910 |" in rows
    kinds = "POST $batch 0.600, DELETE scheduler-due 0.400, GET schedulerJobs 0.050"  # largest first
    assert f"| `storage_requests_by_kind` | {kinds} |" in rows
    assert "| `count_window_started_late` | no |" in rows


def test_a_list_of_figures_becomes_a_table_of_its_own() -> None:
    steady = _sections(render(FIGURES, ORDER))["steady"]
    table = steady[steady.index("`by_minute`:") :].split("\n\n")[1].splitlines()
    assert table == [
        "| `minute` | `arrived` | `lateness_s.p99` |",
        "|---|---|---|",
        "| 1 | 6,000 | 0.300 |",
        "| 2 | 6,000 | 0.400 |",
    ]


def test_record_merges_a_bench_into_an_existing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "figures.json"
    path.write_text(json.dumps({"idle": FIGURES["idle"]}))
    monkeypatch.setenv("BENCH_FIGURES", str(path))
    figures_module.record("fire", {"herd-300": {"executions": 300}}, raw={"entity_read_p50_ms": 1.2})
    found = json.loads(path.read_text())
    assert found["idle"] == FIGURES["idle"]
    fire = found["fire"]
    assert fire["phases"] == {"herd-300": {"executions": 300}} and fire["raw"] == {"entity_read_p50_ms": 1.2}
    assert fire["machine"]["cores"] >= 1 and fire["commit"] and fire["date"].endswith("Z") and fire["seconds"] >= 0


def _stand_in(tmp_path: Path, name: str, body: str) -> Bench:
    script = tmp_path / f"{name}.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom bench.figures import record\n{body}\n")
    return Bench(name, 0, script=script)


def test_a_failed_bench_keeps_its_earlier_entry_and_the_others_are_replaced(tmp_path: Path) -> None:
    path = tmp_path / "figures.json"
    earlier = {name: _entry(f"old-{name}", {"p": {"executions": 1}}) for name in ("ok", "bad")}
    path.write_text(json.dumps(earlier))
    ok = _stand_in(tmp_path, "ok", "record('ok', {'p': {'executions': 2}})")
    bad = _stand_in(tmp_path, "bad", "record('bad', {'p': {'executions': 3}})\nraise SystemExit(3)")
    silent = _stand_in(tmp_path, "silent", "print('measured, recorded nothing')")
    outcomes = [run_bench(b, path, tmp_path / "logs") for b in (ok, bad, silent)]
    assert [o.status for o in outcomes] == ["ran", "failed", "recorded nothing"]
    found = json.loads(path.read_text())
    assert found["ok"]["commit"] != "old-ok" and found["ok"]["phases"] == {"p": {"executions": 2}}
    assert "last_failure" not in found["ok"]
    assert found["bad"]["commit"] == "old-bad" and found["bad"]["phases"] == {"p": {"executions": 1}}
    assert found["bad"]["last_failure"]["exit"] == 3
    assert found["silent"]["last_failure"]["reason"] == "it recorded no figures"
    assert (tmp_path / "logs" / "silent.log").read_text() == "measured, recorded nothing\n"

    page = tmp_path / "figures.md"
    assert main(["--render", "--figures", str(path), "--page", str(page)]) == 0
    sections = _sections(page.read_text())
    assert "- commit: old-bad," in sections["bad"] and "**Not re-run**" in sections["bad"]
    assert "**Not re-run**" in sections["silent"] and "no earlier figures" in sections["silent"]
    assert "**Not re-run**" not in sections["ok"]
