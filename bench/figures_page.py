"""docs/figures.md from docs/figures.json: every bench's latest figures, each with where it comes from.

Contract: `render(figures, order)` is a pure function of the figures file's contents (bench/figures.py, the
schema shared by the issue-41 helpers) and the order the benches run in (bench/report.py); the page it returns
holds, per bench, its own commit, date, machine (cores, load before and after, Python), command, wall time and raw
storage, then an overview of its phases and a table per phase with every figure under its figures.json name
(`lateness_s.p99`, `host_cpu_ms_per_execution`), so a figure the docs cite can be found by that name. A bench
whose last run failed keeps its earlier figures and is marked "not re-run" (the entry's `last_failure`, written
by bench/report.py); one with no entry is listed as not measured. Nothing here reads the clock or the git tree:
the same file renders to the same page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# The overview's columns, in order: (figures.json name, heading). A column shows when any phase has it.
OVERVIEW = (
    ("executions", "executions"),
    ("lost", "lost"),
    ("not_arrived", "not arrived (run ended)"),
    ("duplicated", "duplicated"),
    ("early", "early"),
    ("lateness_s.p50", "lateness p50 s"),
    ("lateness_s.p99", "p99 s"),
    ("lateness_s.max", "max s"),
    ("storage_requests_per_execution", "storage requests / execution"),
    ("ratio_to_raw", "ratio to raw"),
    ("invocations_per_execution", "invocations / execution"),
    ("host_cpu_ms_per_execution", "host CPU ms / execution"),
    ("host_rss_mb", "host RSS MB"),
    ("storage_cpu_ms_per_execution", "Azurite CPU ms / execution"),
    ("storage_cpu_busy", "Azurite busy (of its one thread)"),
)
FIRST = tuple(key for key, _ in OVERVIEW)  # a phase's table lists these first, then the rest by name

HEADER = """# Benchmark figures

Generated from docs/figures.json by `bench/report.py`; do not edit by hand. `make bench` runs every bench once
(cheap ones first) and regenerates this page, the generated blocks of docs/cost.md and docs/capacity.md
(`bench/cost.py --write`) with it; `.venv/bin/python bench/report.py --only NAME[,NAME]` re-runs some benches
and keeps the others' figures; `--render` regenerates the pages from docs/figures.json without running anything.

Each section states its own commit, date, machine and command: benches re-run at different times show different
commits, and a bench whose last run failed keeps its earlier figures, marked "not re-run". Storage requests are
counted on the wire by bench/storage_meter.py (everything the app does: the host's queue polling, the timer,
the dispatch tasks, the executor); host CPU is the local host process's user and system time over the phase's
count window, divided by its executions; Azurite CPU (the steady and fire benches) is the storage emulator's the same
way, and "Azurite busy" its share of the one thread it answers on: near 1, the emulator bounded the phase, not the
app. Names in `code` are the keys of docs/figures.json.

The keys bench/cost.py reads: per phase `executions`, `lateness_s` (p50, p99, max, min: seconds at the target
after the due time), `storage_requests_per_execution`, `storage_requests_by_kind` (per execution, keyed
`METHOD resource` as the meter counts them), `invocations_per_execution` (executor, dispatch and timer),
`host_cpu_ms_per_execution`, `seconds` (the phase's count window) and, for a steady phase, `rate_per_s` (the
offered rate; `executions_per_s` is what arrived); the idle phase gives `storage_requests_per_hour`,
`storage_requests_by_kind_per_hour`, `invocations_per_hour` and `host_cpu_s_per_hour`. A bench's `raw` is raw
storage measured in the same run, and `ratio_to_raw` a phase's figure over it where the bench computes one."""


def render(figures: Mapping[str, Any], order: Sequence[str]) -> str:
    """The page for `figures`: benches in `order` first, then any other entry the file holds, by name."""
    names = [n for n in order if n in figures] + sorted(n for n in figures if n not in order)
    out = [HEADER, "", _summary(figures, names)]
    missing = [n for n in order if n not in figures]
    if missing:
        out += ["", "Not measured yet: " + ", ".join(missing) + "."]
    for name in names:
        out += ["", *_bench(name, figures[name])]
    return "\n".join(out).rstrip() + "\n"


def _summary(figures: Mapping[str, Any], names: Iterable[str]) -> str:
    rows = ["| bench | commit | date | wall time | phases |", "| --- | --- | --- | --- | --- |"]
    for name in names:
        entry = figures[name]
        status = " (not re-run: its last run failed)" if entry.get("last_failure") else ""
        rows.append(
            f"| [{name}](#{_anchor(name)}){status} | {entry.get('commit', '–')} | {entry.get('date', '–')} | "
            f"{_seconds(entry.get('seconds'))} | {len(entry.get('phases') or {})} |"
        )
    return "\n".join(rows)


def _bench(name: str, entry: Mapping[str, Any]) -> list[str]:
    out = [f"## {name}", ""]
    failure = entry.get("last_failure")
    if failure:
        when = f"the run of {failure.get('date', '?')} (commit {failure.get('commit', '?')})"
        why = failure.get("reason") or f"exit status {failure.get('exit', '?')}"
        kept = "the figures below are from its earlier run" if entry.get("phases") else "no earlier figures"
        out += [f"**Not re-run**: {when} failed ({why}); {kept}.", ""]
    if "commit" not in entry:
        return out
    machine = entry.get("machine") or {}
    out += [
        f"- commit: {entry.get('commit', '?')}, date: {entry.get('date', '?')}",
        f"- machine: {machine.get('cores', '?')} cores, load {machine.get('load_before', '?')} before and "
        f"{machine.get('load_after', '?')} after (1-minute average), Python {machine.get('python', '?')}",
        f"- command: `{entry.get('command', '?')}`",
        f"- wall time: {_seconds(entry.get('seconds'))}",
        "- raw storage in the same run: "
        + (", ".join(f"`{k}` {_value(v)}" for k, v in sorted((entry.get("raw") or {}).items())) or "not measured"),
    ]
    phases: Mapping[str, Any] = entry.get("phases") or {}
    ordered = sorted(phases, key=natural)
    overview = _overview(phases, ordered)
    if overview:
        out += ["", *overview]
    for phase in ordered:
        out += ["", f"### {name} / {phase}", "", *_phase(phases[phase])]
    return out


def _overview(phases: Mapping[str, Any], ordered: Sequence[str]) -> list[str]:
    flat = {phase: dict(flatten(phases[phase])) for phase in ordered}
    columns = [(key, head) for key, head in OVERVIEW if any(key in f for f in flat.values())]
    rows = [phase for phase in ordered if any(key in flat[phase] for key, _ in columns)]
    if not columns or not rows:
        return []
    out = ["| phase | " + " | ".join(head for _, head in columns) + " |", "|---" * (len(columns) + 1) + "|"]
    out += [f"| {p} | " + " | ".join(_value(flat[p].get(key)) for key, _ in columns) + " |" for p in rows]
    return out


def _phase(figures: Mapping[str, Any]) -> list[str]:
    rows: list[tuple[str, Any]] = []
    tables: list[list[str]] = []
    for key, value in flatten(figures):
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            tables.append(["", f"`{key}`:", "", *_list_table(value)])
        else:
            rows.append((key, value))
    rows.sort(key=lambda row: (FIRST.index(row[0]) if row[0] in FIRST else len(FIRST), row[0]))
    out = ["| figure | value |", "| --- | --- |", *[f"| `{k}` | {_value(v)} |" for k, v in rows]]
    for table in tables:
        out += table
    return out


def _list_table(items: Sequence[Mapping[str, Any]]) -> list[str]:
    flat = [dict(flatten(item)) for item in items]
    keys = list(dict.fromkeys(key for f in flat for key in f))
    out = ["| " + " | ".join(f"`{k}`" for k in keys) + " |", "|---" * len(keys) + "|"]
    return out + ["| " + " | ".join(_value(f.get(k)) for k in keys) + " |" for f in flat]


def flatten(figures: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted name, value) pairs; a by-kind count stays one value (a dict of counts reads as one figure)."""
    out: list[tuple[str, Any]] = []
    for key, value in figures.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and not _is_counts(name):
            out += flatten(value, f"{name}.")
        else:
            out.append((name, value))
    return out


def _is_counts(name: str) -> bool:
    return "_by_kind" in name


def natural(name: str) -> list[tuple[int, float | str]]:
    """Sort key that reads numbers as numbers: herd-300 before herd-1000, 0s before 0.2s before 2s."""
    parts = re.split(r"(\d+(?:\.\d+)?)", name)
    return [(0, float(p)) if i % 2 else (1, p) for i, p in enumerate(parts) if p]


def _value(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, Mapping):
        if not value:
            return "–"
        ordered = sorted(value.items(), key=lambda kv: -kv[1] if isinstance(kv[1], int | float) else 0)
        return ", ".join(f"{k} {_value(v)}" for k, v in ordered)
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value) or "–"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _number(value: float) -> str:
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    if size >= 0.001 or size == 0:
        return f"{value:.3f}"
    return f"{value:.2g}"


def _seconds(value: Any) -> str:
    if not isinstance(value, int | float):
        return "–"
    return f"{value:,.0f} s ({value / 60:.1f} min)" if value >= 60 else f"{value:.1f} s"


def _anchor(name: str) -> str:
    """GitHub's anchor for a `## name` heading."""
    return re.sub(r"[^\w\- ]", "", name.lower()).replace(" ", "-")
