"""Targets that push back (issue 40): a herd against a target that answers 429, and a target down then back.

Runs the real app under the local host (as `make run` does, bench/harness.py) against its own Azurite, creates
every phase's jobs first (far enough ahead that the minute timer, not the API, queues them; one collection per
phase, up to 1,000 jobs), and records every request at its local target (bench/pushback_targets.py, a process of
its own, on loopback), with the status it was given. Phases (`--phases herd,outage`, default both):

- herd: `--jobs` (1,000) one-shot jobs due at :00 of one minute against a target that answers 200 (after
  `--delay`, 0.5 s) to at most `--rate` (50) requests in any sliding second and 429 with `Retry-After:
  --retry-after` (5) to the others. Reported: accepted, lost, duplicated (an occurrence accepted twice), refused
  (429) answers; the most requests (refused included) in any sliding second from one second after the first 429
  on, and in the first second of throttling; from :00 to the last accepted request; retries used (attempts with
  retryCount > 0, failed attempts: 0 expected); ledger entries with reason Deferred seen while it ran (a few
  waiting jobs' ledgers read every 0.5 s) and, after, the ledger entries with waitedFor Destination.
- outage: `--outage-jobs` (200) one-shot jobs due spread over `--down` (120) seconds, every one of them due while
  the target answers 500 (from before the first until `--down` s after it), then 200. Reported: when the circuit
  opened after the first failure (from the target's log: the last failure before the requests fell to probes;
  and from the destination's row, read every 0.5 s: the first time it was Open), the requests while open (the most
  in any 5 s, the shortest gap between two), each occurrence accepted once after the target came back (lost,
  duplicated, accepted before), dead letters, and from the target's return to the first and to the last success.
Both phases: the jobs' retry policy is Fixed `--retry-interval` (PT30S) x `--retry-count` (10); storage requests
and function invocations per execution (counted on the wire from one second before the tick that dispatches the
phase to the end of its 20 s duplicate watch, by kind) and the local host's CPU per execution over the same window,
beside raw storage measured in the same run (a single-entity read's p50, bench/idle.py, and executions/s vs raw
operations/s). Printed by bench/pushback_report.py, and recorded (bench/figures.py, when BENCH_FIGURES names a file)
as bench "pushback", phases "herd" and "outage".

    .venv/bin/python bench/pushback.py [--phases herd,outage] [--jobs 1000 --rate 50] [--outage-jobs 200]
        [--delay 0.5] [--dump requests.tsv]
    .venv/bin/python bench/pushback.py --jobs 100 --rate 10 --outage-jobs 20 --down 40     # scaled down

Done when (issue 40): 0 lost, 0 duplicated, the rate within the budget after the first second of throttling, no
retry used by a deferral, Deferred in the ledger naming the destination; the circuit open within 10 s, at most one
probe per 5 s, every occurrence run once after it closes. Figures, not tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import record  # noqa: E402
from bench.harness import Harness, next_minute, one_shot, pause_until  # noqa: E402
from bench.idle import raw_round_trip  # noqa: E402
from bench.phase_figures import raw_read  # noqa: E402
from bench.pushback_report import report_herd, report_outage  # noqa: E402
from bench.pushback_targets import PushbackTargets  # noqa: E402
from bench.pushback_watch import Deferred, Reader  # noqa: E402
from shared.jobstate.circuit import Circuit, circuit_of  # noqa: E402

WATCH = timedelta(seconds=20)  # duplicates watched for after the last acceptance
SAMPLE = 6  # waiting jobs whose ledger is read every 0.5 s


@dataclass
class Phase:
    name: str
    collection: str
    target: str  # "budget" or "outage"
    plan: dict[str, datetime]  # job -> due
    late_start: bool = False
    requests: int = 0
    invocations: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    host_cpu_s: float = 0.0  # the local host's CPU over the count window
    deferred: Deferred = field(default_factory=Deferred)
    first_open: datetime | None = None  # the destination's row first read Open
    rates: list[tuple[float, float]] = field(default_factory=list)  # (s after :00, its budget) as the row changed

    @property
    def due(self) -> datetime:
        return min(self.plan.values())


def jobs_of(phase: Phase, url: str, args: argparse.Namespace) -> list[tuple[str, str, dict[str, Any]]]:
    retry = {"retryType": "Fixed", "retryInterval": f"PT{args.retry_interval}S", "retryCount": args.retry_count}
    made = []
    for name, due in phase.plan.items():
        properties = one_shot(due, url)
        properties["action"]["retryPolicy"] = retry
        made.append((phase.collection, name, properties))
    return made


def measure(harness: Harness, targets: PushbackTargets, reader: Reader, phase: Phase, until: datetime) -> None:
    """From one second before the tick that dispatches the phase until every job was accepted (or `until`), then
    the duplicate watch; sampling waiting jobs' ledgers and the destination's circuit every 0.5 s."""
    phase.late_start = not pause_until(phase.due.replace(second=0) - timedelta(minutes=1, seconds=1))
    requests, invocations, kinds = harness.requests(), harness.invocations(), harness.kinds()
    cpu = harness.host_cpu_seconds()
    destination = f"127.0.0.1:{targets.ports[phase.target]}"
    turn = 0
    while datetime.now(UTC) < until:
        answers = [a for a in targets.answers(phase.target) if a.job in phase.plan]
        accepted = {a.job for a in answers if a.status == 200}
        if len(accepted) == len(phase.plan):
            break
        now = datetime.now(UTC)
        if phase.target == "outage":  # most of them wait without having reached the target
            waiting = sorted(job for job, due in phase.plan.items() if due <= now and job not in accepted)
        else:
            waiting = sorted({a.job for a in answers} - accepted)
        if waiting:
            start = turn % len(waiting)
            reader.sample_deferred(phase.collection, (waiting + waiting)[start : start + SAMPLE], phase.deferred)
            turn += SAMPLE
        if now >= phase.due:
            state = reader.state(destination)
            if state.rate is not None and (not phase.rates or phase.rates[-1][1] != state.rate):
                phase.rates.append(((now - phase.due).total_seconds(), state.rate))
            if phase.first_open is None and circuit_of(state, now) != Circuit.CLOSED:
                phase.first_open = now
        time.sleep(0.5)
    last = max((a.at for a in targets.answers(phase.target) if a.job in phase.plan), default=datetime.now(UTC))
    pause_until(max(datetime.now(UTC), last + WATCH))
    phase.requests = harness.requests() - requests
    phase.invocations = harness.invocations() - invocations
    phase.kinds = harness.kinds() - kinds
    phase.host_cpu_s = harness.host_cpu_seconds() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", default="herd,outage", help="comma-separated: herd, outage")
    parser.add_argument("--jobs", type=int, default=1000, help="the herd's jobs")
    parser.add_argument("--rate", type=int, default=50, help="requests the herd's target takes in any second")
    parser.add_argument("--retry-after", type=int, default=5, help="seconds, in its 429 answers")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the targets take to answer a success")
    parser.add_argument("--outage-jobs", type=int, default=200)
    parser.add_argument("--down", type=int, default=120, help="seconds the outage target is down (500)")
    parser.add_argument("--retry-interval", type=int, default=30, help="the jobs' Fixed retry interval, seconds")
    parser.add_argument("--retry-count", type=int, default=10)
    parser.add_argument("--dump", type=Path, help="write every request the targets saw here (TSV) at the end")
    args = parser.parse_args()
    chosen = {p.strip() for p in args.phases.split(",") if p.strip()}
    if not chosen or chosen - {"herd", "outage"}:
        parser.error("--phases takes herd, outage or both")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the host, targets and Azurite on a kill

    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        harness = stack.enter_context(Harness(Path(tmp), {}))
        reader = Reader(harness.azurite.connection_string)
        total = (args.jobs if "herd" in chosen else 0) + (args.outage_jobs if "outage" in chosen else 0)
        due = next_minute(datetime.now(UTC), timedelta(minutes=2, seconds=30 + total / 40))
        phases: list[Phase] = []
        if "herd" in chosen:
            phases.append(Phase("herd", "herd", "budget", {f"h{n:04d}": due for n in range(args.jobs)}))
            # Its window (and duplicate watch) ends before the outage's dispatch tick starts the next one.
            due = next_minute(due, timedelta(seconds=args.retry_after + 3 * args.jobs / args.rate + 85))
        up_at = due + timedelta(seconds=args.down)
        if "outage" in chosen:
            spread = {
                f"o{n:04d}": due + timedelta(seconds=n * args.down // args.outage_jobs) for n in range(args.outage_jobs)
            }
            phases.append(Phase("outage", "outage", "outage", spread))
        targets = PushbackTargets(Path(tmp), args.rate, args.retry_after, args.delay, up_at.timestamp()).start()
        stack.callback(targets.stop)
        started = time.perf_counter()
        for phase in phases:
            harness.collection(phase.collection)
            harness.create_jobs(jobs_of(phase, targets.url(phase.target), args))
        raw = raw_round_trip(harness)  # straight to Azurite, before any phase's count window
        print(
            f"created {total} jobs in {time.perf_counter() - started:.1f} s; phases at "
            + ", ".join(f"{p.name} {p.due:%H:%M:%S}Z" for p in phases),
            flush=True,
        )
        figures: dict[str, dict[str, Any]] = {}
        for phase in phases:
            if phase.target == "budget":
                until = phase.due + timedelta(seconds=args.retry_after + 3 * args.jobs / args.rate + 60)
            else:
                until = up_at + timedelta(minutes=5)
            measure(harness, targets, reader, phase, until)
            if phase.target == "budget":
                figures[phase.name] = report_herd(phase, targets, reader, raw, until, args)
            else:
                figures[phase.name] = report_outage(phase, targets, reader, raw, up_at, until, args)
            sys.stdout.flush()
        if args.dump:
            with args.dump.open("w") as out:
                out.writelines(a.tsv() for a in targets.answers())
    record("pushback", figures, raw_read(raw))


if __name__ == "__main__":
    main()
