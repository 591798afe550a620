"""How precisely the scheduler fires one-shot jobs in herds, against targets that take their time.

Runs the real app under the local host (as `make run` does) against its own Azurite, creates every phase's
jobs first, far enough ahead that the minute timer (not the API) queues them, and records when each request
reaches its local target (bench/targets.py, a process of its own). Phases, in order, each in its own
collection and its own minutes (the output says so if a phase's count window started late):

- spread: 500 jobs due across one minute, target answering at once;
- herd 300 and herd 1,000 against a target answering at once, then herds of 1,000 at 0.2, 0.5 and 2 s;
- herd 1,000 against an HTTPS target answering in 0.5 s (a throw-away CA only this run's host trusts);
- mixed: 900 jobs at a 0.5 s host and 100 at a host that hangs past the 60 s deadline.

Per phase: fired, duplicates (watched for 20 s after the last arrival, longer than a redelivery or a
watchdog takes), lost, early, lateness at the target (p50/p99/max), storage requests and function
invocations per execution, counted from one second before the minute timer's tick that dispatches the
phase until the end of the duplicate watch (so a herd's own dispatch is in its count).

    python bench/fire.py [--phase herd-1000-0.5 ...] [--dump arrivals.jsonl]

Targets (issue 22): herd of 1,000 at a 0.5 s target p99 <= 2 s (HTTPS <= 2.5 s), exactly once, none early;
mixed herd: the healthy 900 p99 <= 2 s; <= 2 storage requests per execution in a herd. Figures, not tests.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import Harness, kinds_line, lateness_line, next_minute, one_shot, pause_until  # noqa: E402
from bench.targets import Arrival  # noqa: E402

HOSTS: dict[str, float | None] = {"instant": 0.0, "0.2s": 0.2, "0.5s": 0.5, "2s": 2.0, "hang": None}
HTTPS: dict[str, float | None] = {"tls-0.5s": 0.5}
WATCH = timedelta(seconds=20)  # duplicates watched for after the last arrival


@dataclass
class Phase:
    name: str
    groups: dict[str, int]  # target host -> jobs aimed at it
    spread: bool = False
    minutes: int = 2  # minutes of the schedule it occupies (its dispatch minute and its own)
    wait: float = 60.0  # seconds after its last due time that its attempts may take (hanging: the deadline)
    due: datetime = field(default_factory=lambda: datetime.min.replace(tzinfo=UTC))
    plan: dict[str, tuple[datetime, str]] = field(default_factory=dict)  # job -> (due, target host)
    late_start: bool = False
    requests: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    invocations: int = 0
    rss_mb: float = 0.0


PHASES = {
    "spread-500": Phase("spread-500", {"instant": 500}, spread=True, minutes=3),
    "herd-300": Phase("herd-300", {"instant": 300}),
    "herd-1000-0s": Phase("herd-1000-0s", {"instant": 1000}),
    "herd-1000-0.2s": Phase("herd-1000-0.2s", {"0.2s": 1000}),
    "herd-1000-0.5s": Phase("herd-1000-0.5s", {"0.5s": 1000}),
    "herd-1000-2s": Phase("herd-1000-2s", {"2s": 1000}),
    "herd-1000-https-0.5s": Phase("herd-1000-https-0.5s", {"tls-0.5s": 1000}),
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
    harness.collection(f"p{index}")
    return harness.create_jobs(
        (f"p{index}", name, one_shot(due, harness.targets.url(host))) for name, (due, host) in phase.plan.items()
    )


def window_start(phase: Phase) -> datetime:
    """One second before the tick that dispatches the phase (the minute timer queues the minute after its own)."""
    return min(due for due, _ in phase.plan.values()).replace(second=0) - timedelta(minutes=1, seconds=1)


def measure(harness: Harness, phase: Phase) -> None:
    phase.late_start = not pause_until(window_start(phase))
    requests, invocations, kinds = harness.requests(), harness.invocations(), harness.kinds()
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


def arrived(harness: Harness, phase: Phase) -> list[Arrival]:
    return [a for a in harness.targets.arrivals() if a.job in phase.plan]


def report(phase: Phase, arrivals: list[Arrival]) -> None:
    name = phase.name
    jobs = {a.job for a in arrivals}
    lateness = [(a.at - phase.plan[a.job][0]).total_seconds() for a in arrivals]
    flags = " (its count window started late: the counts miss part of its dispatch)" if phase.late_start else ""
    print(
        f"[{name}] fired:      {len(jobs)}/{len(phase.plan)} jobs, {len(arrivals) - len(jobs)} duplicate(s), "
        f"{len(phase.plan) - len(jobs)} lost, {sum(1 for x in lateness if x < 0)} early{flags}"
    )
    for host in phase.groups:
        group = [(a.at - phase.plan[a.job][0]).total_seconds() for a in arrivals if phase.plan[a.job][1] == host]
        print(f"[{name}] lateness:   {host + ' target: ' if len(phase.groups) > 1 else ''}{lateness_line(group)}")
    executions = max(len(arrivals), 1)
    print(
        f"[{name}] cost:       {phase.requests / executions:.2f} storage requests and "
        f"{phase.invocations / executions:.3f} function invocations (executor, dispatch, timer) per execution "
        f"({phase.requests} requests, {phase.invocations} invocations, {len(arrivals)} executions); "
        f"host RSS peak {phase.rss_mb:.0f} MB"
    )
    print(f"[{name}] requests:   {kinds_line(phase.kinds, len(arrivals))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", action="append", choices=list(PHASES), help="run only these (repeatable)")
    parser.add_argument("--dump", type=Path, help="write every arrival (job, due, arrival) as JSON lines here")
    args = parser.parse_args()
    phases = [PHASES[name] for name in (args.phase or list(PHASES))]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the host, targets and Azurite on a kill

    with tempfile.TemporaryDirectory() as tmp, Harness(Path(tmp), HOSTS, HTTPS) as harness:
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
        print(
            f"created {jobs} jobs in {time.perf_counter() - started:.1f} s; phases at "
            + ", ".join(f"{p.name} {p.due:%H:%M:%S}Z" for p in phases),
            flush=True,
        )
        for phase in phases:
            measure(harness, phase)
            report(phase, arrived(harness, phase))
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


if __name__ == "__main__":
    main()
