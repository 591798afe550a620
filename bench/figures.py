"""What a bench run measured, kept for docs/figures.md: each bench ends by `record`ing its phases' figures.

`record` merges the bench's entry into the JSON file named by the environment's BENCH_FIGURES (bench/report.py sets
it; unset, nothing is written, so a bench run by hand only prints). An entry holds the commit, the date, the machine
(cores, load before and after, Python), the command, the bench's wall time, raw storage measured in the same run,
and one dict of figures per phase (keys in snake_case; the shapes the cost model reads are in docs/figures.md).

`cpu_seconds(pid)` is a process's CPU time (user and system, with its waited-for children) from /proc, so a bench
reports host CPU per execution beside lateness: a change that costs CPU shows.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_STARTED = time.time()
_LOAD_BEFORE = os.getloadavg()[0]


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of the process (and of its children it waited for)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def commit() -> str:
    try:
        found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True)
    except OSError:
        return "unknown"
    name = found.stdout.strip() or "unknown"
    return f"{name}+changes" if dirty.stdout.strip() else name


def machine() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "load_before": round(_LOAD_BEFORE, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
    }


def record(bench: str, phases: dict[str, dict[str, Any]], raw: dict[str, float] | None = None) -> None:
    """Keep the bench's figures in BENCH_FIGURES (merged: other benches' entries stay)."""
    target = os.environ.get("BENCH_FIGURES")
    if not target:
        return
    path = Path(target)
    found: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    # bench/report.py names the entry when it runs one script under several names (steady at 100/s and at 300/s).
    found[os.environ.get("BENCH_RECORD_AS") or bench] = {
        "commit": commit(),
        "date": datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "machine": machine(),
        "command": " ".join(
            [
                ".venv/bin/python",
                *(Path(a).relative_to(ROOT).as_posix() if a.startswith(str(ROOT)) else a for a in sys.argv),
            ]
        ),
        "seconds": round(time.time() - _STARTED, 1),
        "raw": raw or {},
        "phases": phases,
    }
    path.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n")
