"""What bench/scale.py prints once every stage is measured, and records (bench/figures.py, bench "scale").

Phases: `jobs-<n>` for each stage measured (n jobs stored: the tick's wall time and storage requests, GET job, a
jobs page, a history page, the bench's and Azurite's RSS, and the raw queries of the same run, as
`Bench.measure` returns them); `last-vs-first` (each figure's last stage over its first, and why the load stopped,
if it did); `extrapolated-<n>` when the load stopped short of `--jobs` (each figure extrapolated linearly from the
last two stages, and its ratio to the first). `raw`: the raw queries of each stage, by stage.
"""

from __future__ import annotations

from typing import Any

from bench.figures import record

Measured = list[tuple[int, dict[str, float]]]  # (jobs stored, the stage's figures)

ROWS = (
    ("tick wall time s", "tick_s"),
    ("tick storage requests", "tick_requests"),
    ("GET job p50 ms", "get_ms"),
    ("jobs list page p50 ms", "list_ms"),
    ("history page p50 ms", "history_ms"),
    ("bench process RSS MB", "rss_mb"),
    ("Azurite RSS MB", "azurite_rss_mb"),
    ("raw: due partition query ms", "raw_due_ms"),
    ("raw: jobs page query ms", "raw_page_ms"),
    ("raw: get entity ms", "raw_get_ms"),
)
EXTRAPOLATED = (
    ("tick wall time s", "tick_s"),
    ("GET job p50 ms", "get_ms"),
    ("jobs list page p50 ms", "list_ms"),
    ("history page p50 ms", "history_ms"),
    ("Azurite RSS MB", "azurite_rss_mb"),
    ("raw: due partition query ms", "raw_due_ms"),
    ("raw: jobs page query ms", "raw_page_ms"),
)


def report(measured: Measured, jobs: int, stopped: str | None) -> None:
    """Print the stages side by side (and the extrapolation to `jobs` when the load stopped short); record them."""
    phases: dict[str, dict[str, Any]] = {
        f"jobs-{n}": {"jobs_stored": n, **{key: round(value, 4) for key, value in figures.items()}}
        for n, figures in measured
    }
    sizes = [f"{n:,} jobs" for n, _ in measured]
    print("\n" + f"{'figure':<29}" + "".join(f"{size:>15}" for size in sizes) + f"{'last/first':>12}")
    ratios: dict[str, Any] = {"jobs_first": measured[0][0], "jobs_last": measured[-1][0], "stopped": stopped}
    for name, key in ROWS:
        values = [figures[key] for _, figures in measured]
        print(f"{name:<29}" + "".join(f"{v:>15.2f}" for v in values) + f"{values[-1] / values[0]:>12.2f}")
        ratios[key] = round(values[-1] / values[0], 3)
    phases["last-vs-first"] = ratios
    if len(measured) >= 2 and measured[-1][0] < jobs:
        (n1, f1), (n2, f2) = measured[-2], measured[-1]
        print(f"\nExtrapolated linearly from {n1:,} and {n2:,} jobs to {jobs:,}:")
        extrapolated: dict[str, Any] = {"from_jobs": [n1, n2]}
        for name, key in EXTRAPOLATED:
            slope = (f2[key] - f1[key]) / (n2 - n1)
            value = f2[key] + slope * (jobs - n2)
            first = measured[0][1][key]
            print(f"  {name:<24}{value:>12.2f}  ({value / first:.2f}x the 1k figure)")
            extrapolated |= {key: round(value, 4), f"{key}_vs_first": round(value / first, 3)}
        phases[f"extrapolated-{jobs}"] = extrapolated
    raw = {
        f"{key}_{n}_jobs": round(figures[key], 4)
        for n, figures in measured
        for key in ("raw_get_ms", "raw_page_ms", "raw_due_ms")
    }
    record("scale", phases, {"entity_read_p50_ms": round(measured[0][1]["raw_get_ms"], 4), **raw})
