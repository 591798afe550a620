"""A bench phase's figures as bench/figures.py records them, and the shared pieces of the lines that print them.

Each bench's report prints a phase's figures and returns the same figures as one dict (snake_case keys, the shapes
docs/figures.md describes: `lateness_s` {p50, p99, max, min} (bench/harness.py's `lateness_figures`), `executions`,
`lost`, `duplicated`, `storage_requests_per_execution`, `storage_requests_by_kind` (per execution, keyed
`METHOD resource` as bench/storage_meter.py counts), `invocations_per_execution`, `host_cpu_ms_per_execution`,
`ratio_to_raw`, and any other figure the bench prints); the bench ends with `bench.figures.record(name, phases, raw)`.

Floats are rounded so the JSON reads; a figure that could not be measured is None, never NaN (JSON has none).
Host CPU per execution is the local host process's CPU seconds over the phase's count window (the difference of
two `Harness.host_cpu_seconds()` readings, or of `bench.figures.cpu_seconds(pid)` summed over several hosts)
divided by the phase's executions, in milliseconds. `storage_cpu_ms_per_execution` is Azurite's CPU the same way,
and `storage_cpu_busy` its share of the one thread Azurite answers on (`storage_cpu_figures`).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from bench.harness import per_execution


def num(value: float | None, digits: int = 3) -> float | None:
    """`value` rounded; None for a figure that is not a number (no executions, nothing arrived)."""
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits)


def cpu_ms(cpu_seconds: float, executions: int) -> float | None:
    """Host CPU milliseconds per execution; None when nothing executed."""
    return per_execution(cpu_seconds * 1000, executions, 3)


def cpu_text(cpu_seconds: float, executions: int) -> str:
    per = cpu_ms(cpu_seconds, executions)
    return f"host CPU {'-' if per is None else f'{per:.2f}'} ms per execution ({cpu_seconds:.2f} s)"


def cost(requests: int, invocations: int, kinds: Counter[str], executions: int, cpu_seconds: float) -> dict[str, Any]:
    """What a phase's count window cost, per execution (and in total)."""
    return {
        "storage_requests": requests,
        "invocations": invocations,
        "storage_requests_per_execution": per_execution(requests, executions),
        "storage_requests_by_kind": {
            kind: per_execution(count, executions) for kind, count in kinds.most_common() if count
        },
        "invocations_per_execution": per_execution(invocations, executions),
        "host_cpu_s": round(cpu_seconds, 3),
        "host_cpu_ms_per_execution": cpu_ms(cpu_seconds, executions),
    }


def storage_cpu_figures(bench: str, cpu_seconds: float, executions: int, seconds: float) -> dict[str, Any]:
    """Azurite's CPU over a phase's count window, per execution and as its share of one core (it answers on one
    thread: near 1, the local storage emulator, not the app, bounds the phase). Printed as `bench`'s line."""
    per = cpu_ms(cpu_seconds, executions)
    busy = cpu_seconds / seconds if seconds > 0 else None
    print(
        f"[{bench}] storage emulator (Azurite) CPU {'-' if per is None else f'{per:.2f}'} ms per execution "
        f"({cpu_seconds:.1f} s in {seconds:g} s: {'-' if busy is None else f'{busy:.2f}'} of its one thread)"
    )
    return {
        "storage_cpu_s": round(cpu_seconds, 3),
        "storage_cpu_ms_per_execution": per,
        "storage_cpu_busy": num(busy),
    }


def raw_read(seconds: float) -> dict[str, float]:
    """Raw storage in the same run: a single-entity read's p50 (bench/idle.py's `raw_round_trip`)."""
    return {"entity_read_p50_ms": round(seconds * 1000, 3), "raw_ops_per_s": round(1 / seconds, 1)}
