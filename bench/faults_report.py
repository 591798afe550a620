"""What bench/faults.py keeps of a phase and makes of it: the local target that records every call by occurrence
(when it arrived, when it was answered), a phase's plan and crashes, and the phase's line and figures.

A phase's figures (bench/phase_figures.py's shapes): `jobs` (occurrences planned), `executions` (fired), `lost`,
`duplicated` split into `duplicated_in_flight` (the call before it was in flight at a crash: fired, not answered
1 s before it) and `duplicated_answered` (answered at least 1 s before a crash, or no crash to explain it);
`lateness_s` of the occurrences no crash held and `late_over_5_min`; `held_by_crash` and `held_worst_s` (from when
the host was back, or from their second when that came later) when the phase had crashes.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any

from bench.harness import percentile
from bench.phase_figures import num
from tests.support.crash import serve_on_loopback

Occurrence = tuple[str, datetime]  # (job name, expected execution time)
SLOW_ANSWER = 5.0  # seconds the target takes to answer a "slow" job


@dataclass
class Call:
    at: datetime
    answered: datetime | None = None


class Target:
    """Records every call by occurrence, when it arrived and when it was answered; "slow*" jobs answer late."""

    def __init__(self) -> None:
        self.calls: dict[Occurrence, list[Call]] = defaultdict(list)
        lock = threading.Lock()
        calls = self.calls

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                call = Call(datetime.now(UTC))
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                job = self.headers["x-ms-scheduler-jobid"]
                expected = datetime.fromisoformat(self.headers["x-ms-scheduler-expected-execution-time"])
                with lock:
                    calls[(job, expected)].append(call)
                if job.startswith("slow"):
                    time.sleep(SLOW_ANSWER)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                self.wfile.flush()
                call.answered = datetime.now(UTC)

            def log_message(self, *args: object) -> None:
                pass

        self.server, self.url = serve_on_loopback(Handler)


@dataclass
class Crash:
    died: datetime
    back: datetime


@dataclass
class Phase:
    name: str
    collection: str
    key: str  # its name in the recorded figures
    plan: set[Occurrence] = field(default_factory=set)
    crashes: list[Crash] = field(default_factory=list)


def report(phase: Phase, target: Target) -> dict[str, Any]:
    """Print the phase's line; its figures."""
    lateness, held, lost = [], [], 0
    in_flight = answered = 0
    for occurrence in sorted(phase.plan):
        job, due = occurrence
        calls = sorted(target.calls.get(occurrence, []), key=lambda c: c.at)
        if not calls:
            lost += 1
            continue
        first = calls[0]
        holder = next(
            (
                c
                for c in phase.crashes
                if first.at >= c.died and c.died - timedelta(seconds=60) <= due < c.back + timedelta(seconds=6)
            ),
            None,
        )
        if holder is not None:
            held.append((first.at - max(holder.back, due)).total_seconds())
        else:
            lateness.append((first.at - due).total_seconds())
        for again in calls[1:]:  # a run again after a crash that caught the call before it in flight
            before = [c for c in calls if c.at < again.at]
            explained = any(
                c.died > before[-1].at
                and (before[-1].answered is None or before[-1].answered > c.died - timedelta(seconds=1))
                for c in phase.crashes
            )
            in_flight += explained
            answered += not explained
    fired = len(phase.plan) - lost
    figures: dict[str, Any] = {
        "jobs": len(phase.plan),
        "executions": fired,
        "lost": lost,
        "duplicated": in_flight + answered,
        "duplicated_in_flight": in_flight,
        "duplicated_answered": answered,
    }
    line = (
        f"[{phase.name}] fired {fired}/{len(phase.plan)}, lost {lost}; duplicated {in_flight + answered} "
        f"(in flight at a crash {in_flight}, already answered or no crash {answered})"
    )
    if lateness:
        hidden = sum(1 for late in lateness if late > 300)  # a receive's ten-minute visibility
        p50, p99 = percentile(lateness, 0.5), percentile(lateness, 0.99)
        figures["lateness_s"] = {"p50": num(p50), "p99": num(p99), "max": num(max(lateness))}
        figures["late_over_5_min"] = hidden
        line += (
            f"; lateness p50 {p50:.2f} s, p99 {p99:.2f} s, worst {max(lateness):.2f} s ({hidden} more than 5 min late)"
        )
    if phase.crashes:
        worst = max(held, default=0.0)
        figures |= {"crashes": len(phase.crashes), "held_by_crash": len(held), "held_worst_s": num(worst)}
        line += f"; held by a crash {len(held)}, worst {worst:.2f} s after the host was back (or their second)"
    print(line, flush=True)
    return figures
