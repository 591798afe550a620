"""Run every bench once and regenerate docs/figures.md (and the cost and capacity blocks) from what they measured.

    python bench/report.py [--only fire,steady] [--list] [--render]

`make bench` runs it. Each bench runs as a subprocess, one at a time, in BENCHES' order (the cheap ones first),
its output shown and kept in .local/bench/<name>.log, with BENCH_FIGURES pointing at a temporary file of its own:
bench/figures.py's `record` writes the bench's entry there, and only once the bench has exited 0 is the entry
merged into docs/figures.json (written whole to a sibling and renamed), so an interrupted run keeps every
earlier entry intact. A bench that fails (or records nothing) keeps its earlier entry, which gets a
`last_failure` (date, commit, exit status, log) that the page shows as "not re-run"; the run goes on with the
next bench. `--only` re-runs the benches named (the others' entries stay, each with its own commit and date);
`--list` shows the benches and when each last recorded; `--render` only regenerates the pages from the file.

After the benches, docs/figures.md is rendered (bench/figures_page.py) and `bench/cost.py --write` fills the
generated blocks of docs/cost.md and docs/capacity.md from the same file (only for docs/figures.json itself:
a run with `--figures` elsewhere, a scaled-down check, never rewrites the docs).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import commit  # noqa: E402
from bench.figures_page import render  # noqa: E402

FIGURES = ROOT / "docs" / "figures.json"
PAGE = ROOT / "docs" / "figures.md"
LOGS = ROOT / ".local" / "bench"


@dataclass(frozen=True)
class Bench:
    name: str  # the name it records under in figures.json
    minutes: float  # about how long it takes on the 2-core machine
    args: tuple[str, ...] = ()
    by_hand: bool = False  # run only when named in --only
    script: Path | None = None  # default bench/<name>.py

    @property
    def path(self) -> Path:
        return self.script or ROOT / "bench" / f"{self.name}.py"

    def command(self) -> list[str]:
        return [sys.executable, str(self.path), *self.args]

    def shown(self) -> str:
        path = self.path.relative_to(ROOT).as_posix() if self.path.is_relative_to(ROOT) else str(self.path)
        return " ".join([".venv/bin/python", path, *self.args])


BENCHES = (
    Bench("recurrence", 1),
    Bench("api", 2),
    Bench("auth", 2),
    Bench("accounts", 1),
    Bench("memory", 3),
    Bench("idle", 5),
    Bench("limits", 6),
    Bench("overlap", 8),
    Bench("auto_spread", 8),
    Bench("pushback", 10),
    Bench("steady", 10),
    # Jobs created inside the dispatch horizon: the API hands their first occurrences to the queue.
    Bench("near_term", 4),
    # 36,000 jobs created through the API (about 15 min), 7 measured minutes, the drain. The API in worker processes
    # apart from the executor, as Flex Consumption scales the HTTP functions (issue 41 item 6: the API answers).
    # 600 a second: more than twice what one executor worker carries since the collector's policy (shared/collector.py).
    Bench("overload", 28, ("--per-function-scaling", "--rate", "600")),
    Bench("fire", 30),
    # Issue 41's next scale, with two worker processes (FUNCTIONS_WORKER_PROCESS_COUNT) on the 2-core machine.
    Bench("steady_300", 16, ("--rate", "300", "--workers", "2"), script=ROOT / "bench" / "steady.py"),
    Bench("herd_5000", 12, ("--phase", "herd-5000-0.5s", "--workers", "2"), script=ROOT / "bench" / "fire.py"),
    # fire's 1,000 herd at a 0.5 s target alone: the quick check that a change keeps it (the whole of fire: 30 min).
    Bench("herd_1000", 6, ("--phase", "herd-1000-0.5s"), by_hand=True, script=ROOT / "bench" / "fire.py"),
    Bench("faults", 30),
    Bench("scale", 15, ("--budget", "600"), by_hand=True),
)


@dataclass
class Outcome:
    name: str
    status: str  # "ran", "failed", "recorded nothing"
    seconds: float
    recorded: tuple[str, ...] = ()


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def write(path: Path, figures: dict[str, Any]) -> None:
    """Replace `path` whole (a sibling renamed over it): a reader or an interruption never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.part")
    part.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    os.replace(part, path)


def merge(path: Path, entries: dict[str, Any]) -> None:
    """The benches' new entries into the file; every other entry stays as it was."""
    write(path, {**read(path), **entries})


def mark_failed(path: Path, bench: Bench, reason: str, exit_status: int | None, log: Path) -> None:
    """Keep the bench's earlier entry (if any) and say that this run of it failed."""
    figures = read(path)
    entry = dict(figures.get(bench.name) or {})
    entry["last_failure"] = {
        "date": datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "commit": commit(),
        "command": bench.shown(),
        "exit": exit_status,
        "reason": reason,
        "log": log.relative_to(ROOT).as_posix() if log.is_relative_to(ROOT) else str(log),
    }
    figures[bench.name] = entry
    write(path, figures)


def run_bench(bench: Bench, figures: Path, logs: Path = LOGS) -> Outcome:
    """Run one bench with BENCH_FIGURES at a file of its own; its entry goes into `figures` only on success."""
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{bench.name}.log"
    print(f"== {bench.name}: {bench.shown()} (about {bench.minutes:g} min; output also in {log})", flush=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, log.open("w") as out:
        own = Path(tmp) / "figures.json"
        env = {**os.environ, "BENCH_FIGURES": str(own), "BENCH_RECORD_AS": bench.name, "PYTHONUNBUFFERED": "1"}
        child = subprocess.Popen(
            bench.command(),
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        try:
            assert child.stdout is not None
            for line in child.stdout:
                sys.stdout.write(line)
                sys.stdout.flush()
                out.write(line)
            status = child.wait()
        finally:
            stop(child)
        seconds = time.monotonic() - started
        entries = read(own) if status == 0 else {}
    if status != 0:
        mark_failed(figures, bench, f"exit status {status}", status, log)
        return Outcome(bench.name, "failed", seconds)
    if not entries:
        mark_failed(figures, bench, "it recorded no figures", status, log)
        return Outcome(bench.name, "recorded nothing", seconds)
    merge(figures, entries)
    return Outcome(bench.name, "ran", seconds, tuple(sorted(entries)))


def stop(child: subprocess.Popen[str]) -> None:
    """End a bench still running (an interrupted report): SIGTERM lets it stop its host, targets and Azurite."""
    if child.poll() is not None:
        return
    child.terminate()
    try:
        child.wait(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def render_pages(figures: Path, page: Path, order: list[str]) -> None:
    page.write_text(render(read(figures), order))
    print(f"[report] wrote {page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}")
    if figures.resolve() != FIGURES:
        print("[report] not docs/figures.json: docs/cost.md and docs/capacity.md left as they are")
        return
    found = subprocess.run([sys.executable, str(ROOT / "bench" / "cost.py"), "--write"], cwd=ROOT)
    if found.returncode:
        print(f"[report] bench/cost.py --write failed (exit status {found.returncode})")


def choose(only: str | None) -> list[Bench]:
    if not only:
        return [b for b in BENCHES if not b.by_hand]
    names = {n.strip() for n in only.split(",") if n.strip()}
    unknown = names - {b.name for b in BENCHES}
    if unknown:
        raise SystemExit(
            f"unknown bench(es): {', '.join(sorted(unknown))}; known: {', '.join(b.name for b in BENCHES)}"
        )
    return [b for b in BENCHES if b.name in names]


def show_list(figures: Path) -> None:
    found = read(figures)
    for bench in BENCHES:
        entry = found.get(bench.name) or {}
        last = f"{entry['commit']} {entry['date']}" if "commit" in entry else "never recorded"
        flags = (" (by hand)" if bench.by_hand else "") + (" (last run failed)" if entry.get("last_failure") else "")
        print(f"{bench.name:12} about {bench.minutes:3g} min{flags}  {bench.shown()}  [{last}]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", help="comma-separated bench names to re-run (the others' figures stay)")
    parser.add_argument("--list", action="store_true", help="list the benches, in the order they run, and exit")
    parser.add_argument("--render", action="store_true", help="only regenerate the pages from the figures file")
    parser.add_argument("--figures", type=Path, default=FIGURES, help="the figures file (default docs/figures.json)")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page to write (default docs/figures.md)")
    args = parser.parse_args(argv)
    order = [b.name for b in BENCHES]
    outcomes: list[Outcome] = []
    if args.list:
        show_list(args.figures)
        return 0
    if not args.render:
        # A SIGTERM ends the report as Ctrl-C does: the running bench is stopped and the file keeps what it had.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
        outcomes = [run_bench(bench, args.figures) for bench in choose(args.only)]
        print("\n[report] " + "; ".join(f"{o.name} {o.status} in {o.seconds / 60:.1f} min" for o in outcomes))
        for o in outcomes:
            if o.status != "ran":
                print(f"[report] {o.name}: {o.status}; its earlier figures (if any) stay, marked not re-run")
    render_pages(args.figures, args.page, order)
    return 0 if all(o.status == "ran" for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
