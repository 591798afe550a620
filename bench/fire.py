"""How precisely the scheduler fires one-shot jobs in herds, against targets that take their time.

Runs the real app under the local host (as `make run` does) against its own Azurite, creates every phase's
jobs first, far enough ahead that the minute timer (not the API) queues them, and records when each request
reaches its local target (bench/targets.py, a process of its own). Phases, in order, each in its own
collection and its own minutes (the output says so if a phase's count window started late):

- spread: 500 jobs due across one minute, target answering at once;
- herd 300 and herd 1,000 against a target answering at once, then herds of 1,000 at 0.2, 0.5 and 2 s;
- herd 1,000 against an HTTPS target answering in 0.5 s (a throw-away CA only this run's host trusts);
- mixed: 900 jobs at a 0.5 s host and 100 at a host that hangs past the 60 s deadline.

Per phase: fired, duplicates (watched for 20 s after the last arrival, longer than a redelivery or a watchdog
takes), lost, early, lateness at the target (p50/p99/max), storage requests, function invocations and the local
host's CPU per execution, Azurite's too (`storage_cpu_*`, bench/phase_figures.py), counted from one second before
the minute timer's tick that dispatches the phase until the end of the duplicate watch (so a herd's own dispatch is
in its count). Run by bench/report.py, it records every figure it prints in docs/figures.json (bench/figures.py).

    python bench/fire.py [--phase herd-1000-0.5 ...] [--dump arrivals.jsonl]

Targets (issue 22): herd of 1,000 at a 0.5 s target p99 <= 2 s (HTTPS <= 2.5 s), exactly once, none early;
mixed herd: the healthy 900 p99 <= 2 s; <= 2 storage requests per execution in a herd. Figures, not tests.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import record  # noqa: E402
from bench.harness import (  # noqa: E402
    Harness,
    kinds_line,
    lateness_figures,
    lateness_line,
    next_minute,
    one_shot,
    pause_until,
    per_execution,
)
from bench.idle import raw_round_trip  # noqa: E402
from bench.phase_figures import num, raw_read, storage_cpu_figures  # noqa: E402
from bench.targets import Arrival  # noqa: E402

HOSTS: dict[str, float | None] = {"instant": 0.0, "0.2s": 0.2, "0.5s": 0.5, "2s": 2.0, "hang": None}
HTTPS: dict[str, float | None] = {"tls-0.5s": 0.5}
WATCH = timedelta(seconds=20)  # duplicates watched for after the last arrival
COLLECTION_JOBS = 1000  # a P20Premium collection's maxJobCount


@dataclass
class Phase:
    name: str
    groups: dict[str, int]  # target host -> jobs aimed at it
    spread: bool = False
    minutes: int = 2  # minutes of the schedule it occupies (its dispatch minute and its own)
    wait: float = 60.0  # seconds after its last due time that its attempts may take (hanging: the deadline)
    default: bool = True  # run when no --phase names phases (bench/report.py runs the 5,000 herd on its own)
    due: datetime = field(default_factory=lambda: datetime.min.replace(tzinfo=UTC))
    plan: dict[str, tuple[datetime, str]] = field(default_factory=dict)  # job -> (due, target host)
    late_start: bool = False
    requests: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    invocations: int = 0
    rss_mb: float = 0.0
    cpu_s: float = 0.0  # the local host's CPU over the count window
    storage_cpu_s: float = 0.0  # Azurite's CPU over the same window
    seconds: float = 0.0  # the count window's length


PHASES = {
    "spread-500": Phase("spread-500", {"instant": 500}, spread=True, minutes=3),
    "herd-300": Phase("herd-300", {"instant": 300}),
    "herd-1000-0s": Phase("herd-1000-0s", {"instant": 1000}),
    "herd-1000-0.2s": Phase("herd-1000-0.2s", {"0.2s": 1000}),
    "herd-1000-0.5s": Phase("herd-1000-0.5s", {"0.5s": 1000}),
    "herd-1000-2s": Phase("herd-1000-2s", {"2s": 1000}),
    "herd-1000-https-0.5s": Phase("herd-1000-https-0.5s", {"tls-0.5s": 1000}),
    # Five full P20Premium collections due at the same second (issue 41 item 4).
    "herd-5000-0.5s": Phase("herd-5000-0.5s", {"0.5s": 5000}, wait=90.0, default=False),
    "mixed-900-0.5s-100-hang": Phase("mixed-900-0.5s-100-hang", {"0.5s": 900, "hang": 100}, minutes=3, wait=90.0),
}


def plan(phase: Phase, index: int, due: datetime) -> None:
    phase.due = due
    n = 0
    for host, count in phase.groups.items():
        for _ in range(count):
            at = due.replace(second=n % 60) if phase.spread else due
            phase.plan[f"p{index}-{n}"] = (at, host)
            n += 1


def create(harness: Harness, phase: Phase, index: int) -> float:
    """The phase's jobs, in as many full P20Premium collections (1,000 jobs each) as it needs."""
    names = [f"p{index}" if k == 0 else f"p{index}-{k}" for k in range(-(-len(phase.plan) // COLLECTION_JOBS))]
    for name in names:
        harness.collection(name)
    return harness.create_jobs(
        (names[n // COLLECTION_JOBS], name, one_shot(due, harness.targets.url(host)))
        for n, (name, (due, host)) in enumerate(phase.plan.items())
    )


def window_start(phase: Phase) -> datetime:
    """One second before the tick that dispatches the phase (the minute timer queues the minute after its own)."""
    return min(due for due, _ in phase.plan.values()).replace(second=0) - timedelta(minutes=1, seconds=1)


def measure(harness: Harness, phase: Phase) -> None:
    phase.late_start = not pause_until(window_start(phase))
    requests, invocations, kinds = harness.requests(), harness.invocations(), harness.kinds()
    cpu, storage_cpu, began = harness.host_cpu_seconds(), harness.storage_cpu_seconds(), time.monotonic()
    last_due = max(due for due, _ in phase.plan.values())
    deadline = last_due + timedelta(seconds=phase.wait)
    while datetime.now(UTC) < deadline and len(arrived(harness, phase)) < len(phase.plan):
        time.sleep(0.2)
        phase.rss_mb = max(phase.rss_mb, harness.host_rss_mb())
    # The hanging host's attempts end at their deadline and are recorded after it: wait for that too.
    settle = deadline if "hang" in phase.groups else datetime.now(UTC)
    last = max((a.at for a in arrived(harness, phase)), default=datetime.now(UTC))
    pause_until(max(settle, last + WATCH))
    phase.requests = harness.requests() - requests
    phase.kinds = harness.kinds() - kinds
    phase.invocations = harness.invocations() - invocations
    phase.cpu_s = harness.host_cpu_seconds() - cpu
    phase.storage_cpu_s = harness.storage_cpu_seconds() - storage_cpu
    phase.seconds = time.monotonic() - began


def arrived(harness: Harness, phase: Phase) -> list[Arrival]:
    return [a for a in harness.targets.arrivals() if a.job in phase.plan]


def report(phase: Phase, arrivals: list[Arrival], raw: float) -> dict[str, Any]:
    """Print the phase's figures; the same figures for bench/figures.py. `raw`: a single-entity read's p50 in the
    same run; the phase's executions a second (from the first due second to the last arrival) over raw storage's
    operations a second is its ratio to raw."""
    name = phase.name
    jobs = {a.job for a in arrivals}
    lateness = [(a.at - phase.plan[a.job][0]).total_seconds() for a in arrivals]
    flags = " (its count window started late: the counts miss part of its dispatch)" if phase.late_start else ""
    print(
        f"[{name}] fired:      {len(jobs)}/{len(phase.plan)} jobs, {len(arrivals) - len(jobs)} duplicate(s), "
        f"{len(phase.plan) - len(jobs)} lost, {sum(1 for x in lateness if x < 0)} early{flags}"
    )
    by_target: dict[str, dict[str, float]] = {}
    for host in phase.groups:
        group = [(a.at - phase.plan[a.job][0]).total_seconds() for a in arrivals if phase.plan[a.job][1] == host]
        by_target[host] = lateness_figures(group)
        print(f"[{name}] lateness:   {host + ' target: ' if len(phase.groups) > 1 else ''}{lateness_line(group)}")
    cpu_ms = per_execution(phase.cpu_s * 1000, len(arrivals), 3)
    print(
        f"[{name}] host CPU:   {'-' if cpu_ms is None else f'{cpu_ms:.2f}'} ms per execution "
        f"({phase.cpu_s:.2f} s over the {phase.seconds:.0f} s count window)"
    )
    storage_cpu = storage_cpu_figures(name, phase.storage_cpu_s, len(arrivals), phase.seconds)
    executions = max(len(arrivals), 1)
    print(
        f"[{name}] cost:       {phase.requests / executions:.2f} storage requests and "
        f"{phase.invocations / executions:.3f} function invocations (executor, dispatch, timer) per execution "
        f"({phase.requests} requests, {phase.invocations} invocations, {len(arrivals)} executions); "
        f"host RSS peak {phase.rss_mb:.0f} MB"
    )
    print(f"[{name}] requests:   {kinds_line(phase.kinds, len(arrivals))}")
    first_due = min(due for due, _ in phase.plan.values())
    span = max(((a.at - first_due).total_seconds() for a in arrivals), default=0.0)
    rate = len(arrivals) / span if span > 0 else None
    if rate is not None:
        print(
            f"[{name}] vs raw:     {rate:.1f} executions/s from the first due second to the last arrival; raw "
            f"storage {1 / raw:.0f} operations/s (a single-entity read {raw * 1000:.2f} ms): {rate * raw:.3f}"
        )
    figures: dict[str, Any] = {
        "jobs": len(phase.plan),
        "fired": len(jobs),
        "executions": len(arrivals),
        "duplicated": len(arrivals) - len(jobs),
        "lost": len(phase.plan) - len(jobs),
        "early": sum(1 for x in lateness if x < 0),
        "count_window_started_late": phase.late_start,
        "lateness_s": lateness_figures(lateness),
        "storage_requests": phase.requests,
        "invocations": phase.invocations,
        "storage_requests_per_execution": per_execution(phase.requests, len(arrivals)),
        "invocations_per_execution": per_execution(phase.invocations, len(arrivals)),
        "storage_requests_by_kind": {
            kind: per_execution(count, len(arrivals)) for kind, count in phase.kinds.most_common() if count
        },
        "host_cpu_ms_per_execution": cpu_ms,
        "host_cpu_s": round(phase.cpu_s, 3),
        "host_rss_mb": round(phase.rss_mb, 1),
        **storage_cpu,
        "seconds": round(phase.seconds, 1),
        "executions_per_s": num(rate, 1),
        "ratio_to_raw": num(None if rate is None else rate * raw, 4),
    }
    if len(phase.groups) > 1:
        figures["lateness_by_target_s"] = by_target
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", action="append", choices=list(PHASES), help="run only these (repeatable)")
    parser.add_argument("--dump", type=Path, help="write every arrival (job, due, arrival) as JSON lines here")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (host.log, arrivals.tsv, Azurite's)")
    parser.add_argument(
        "--workers", type=int, default=1, help="the local host's worker processes (FUNCTIONS_WORKER_PROCESS_COUNT)"
    )
    args = parser.parse_args()
    phases = [PHASES[name] for name in args.phase] if args.phase else [p for p in PHASES.values() if p.default]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the host, targets and Azurite on a kill

    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    folder = contextlib.nullcontext(str(args.keep)) if args.keep is not None else tempfile.TemporaryDirectory()
    with folder as tmp, Harness(Path(tmp), HOSTS, HTTPS, workers=args.workers) as harness:
        raw = raw_round_trip(harness)  # straight to Azurite, before any phase
        # Every phase's jobs first, far enough ahead (at a conservative 40 PUT/s) that the minute timer, not the
        # API, queues each phase, and no creation runs during a phase's count window.
        jobs = sum(sum(phase.groups.values()) for phase in phases)
        due = next_minute(datetime.now(UTC), timedelta(minutes=2, seconds=30 + jobs / 40)) + timedelta(seconds=20)
        for index, phase in enumerate(phases):
            plan(phase, index, due)
            due += timedelta(minutes=phase.minutes)
        started = time.perf_counter()
        for index, phase in enumerate(phases):
            create(harness, phase, index)
        took = time.perf_counter() - started
        found: dict[str, dict[str, Any]] = {"create": {"jobs": jobs, "seconds": round(took, 1)}}
        print(
            f"created {jobs} jobs in {took:.1f} s; {args.workers} worker process(es); phases at "
            + ", ".join(f"{p.name} {p.due:%H:%M:%S}Z" for p in phases),
            flush=True,
        )
        for phase in phases:
            measure(harness, phase)
            found[phase.name] = report(phase, arrived(harness, phase), raw) | {"workers": args.workers}
            sys.stdout.flush()
        if args.dump:
            with args.dump.open("w") as out:
                for phase in phases:
                    for a in arrived(harness, phase):
                        out.write(
                            json.dumps(
                                {
                                    "phase": phase.name,
                                    "job": a.job,
                                    "at": a.at.isoformat(),
                                    "due": phase.plan[a.job][0].isoformat(),
                                }
                            )
                            + "\n"
                        )
    record("fire", found, raw_read(raw))


if __name__ == "__main__":
    main()
