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
phase to the end of its 20 s duplicate watch, by kind) beside raw storage measured in the same run (a
single-entity read's p50, bench/idle.py, and executions/s vs raw operations/s).

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

from bench.harness import Harness, kinds_line, next_minute, one_shot, pause_until  # noqa: E402
from bench.idle import raw_round_trip  # noqa: E402
from bench.pushback_targets import Answer, PushbackTargets  # noqa: E402
from bench.pushback_watch import Deferred, Reader, densest, most_within, opened_at  # noqa: E402
from shared.jobstate.circuit import Circuit, circuit_of  # noqa: E402
from shared.timings import Timings  # noqa: E402

WATCH = timedelta(seconds=20)  # duplicates watched for after the last acceptance
SAMPLE = 6  # waiting jobs whose ledger is read every 0.5 s
PROBE_EVERY = Timings().circuit_probe_every.total_seconds()  # the host's default


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


def accepted_line(phase: Phase, answers: list[Answer], until: datetime) -> tuple[str, int]:
    taken = Counter(a.job for a in answers if a.status == 200)
    lost = len(phase.plan) - len(taken)
    doubled = sum(n - 1 for n in taken.values())
    flag = " (its count window started late: the counts miss part of its dispatch)" if phase.late_start else ""
    return (
        f"accepted {len(taken)}/{len(phase.plan)}, lost {lost} (not accepted by the end of its window, "
        f"{until:%H:%M:%S}Z), duplicated {doubled}{flag}",
        len(taken),
    )


def cost_lines(phase: Phase, executions: int, raw: float, seconds: float) -> None:
    n = max(executions, 1)
    rate = executions / seconds if seconds > 0 else float("nan")
    print(
        f"[{phase.name}] cost:       {phase.requests / n:.2f} storage requests and {phase.invocations / n:.3f} "
        f"function invocations per execution ({phase.requests} requests, {phase.invocations} invocations, "
        f"{executions} executions); raw storage in the same run: a single-entity read {raw * 1000:.2f} ms (p50), "
        f"{1 / raw:.0f} operations/s; executions/s {rate:.1f} vs raw {1 / raw:.0f} = {rate * raw:.3f}"
    )
    print(f"[{phase.name}] requests:   {kinds_line(phase.kinds, executions)}")


def deferred_line(phase: Phase) -> str:
    example = min(phase.deferred.entries, default=("", "none"))[1]
    return (
        f"{len(phase.deferred.entries)} distinct Deferred entries of {len(phase.deferred.jobs)} jobs in "
        f'{phase.deferred.reads} ledger reads; e.g. "{example}"'
    )


def report_herd(
    phase: Phase, targets: PushbackTargets, reader: Reader, raw: float, until: datetime, args: argparse.Namespace
) -> None:
    name = phase.name
    answers = [a for a in targets.answers("budget") if a.job in phase.plan]
    line, executions = accepted_line(phase, answers, until)
    refused = [a for a in answers if a.status == 429]
    print(f"[{name}] {len(phase.plan)} jobs due at {phase.due:%H:%M:%S}Z; {line}, refused (429) {len(refused)}")
    instants = [a.at.timestamp() for a in answers]
    if refused:
        t0 = min(a.at.timestamp() for a in refused)
        first = sum(1 for t in instants if t0 <= t < t0 + 1)
        first_refused = sum(1 for a in refused if t0 <= a.at.timestamp() < t0 + 1)
        later = [t for t in instants if t >= t0 + 1]
        most, start = densest(later, 1.0)
        inside = sum(1 for a in refused if start <= a.at.timestamp() < start + 1)
        print(
            f"[{name}] rate:       most requests in any sliding second after the first second of throttling "
            f"{most} (budget {args.rate}; from :00 + {start - phase.due.timestamp():.2f} s, {inside} of them "
            f"refused); in the first second of throttling {first} "
            f"({first_refused} refused); in any sliding second overall {most_within(instants, 1.0)}; the first 429 "
            f"at :00 + {t0 - phase.due.timestamp():.2f} s"
        )
    by_second = Counter(int(t - phase.due.timestamp()) for t in instants)
    ok_second = Counter(int(a.at.timestamp() - phase.due.timestamp()) for a in answers if a.status == 200)
    span = range(min(by_second, default=0), max(by_second, default=-1) + 1)
    print(f"[{name}] per second from :00 (accepted/all): {' '.join(f'{ok_second[s]}/{by_second[s]}' for s in span)}")
    budget = ", ".join(f"{rate:.2f}/s at :00 + {at:.1f} s" for at, rate in phase.rates[:8])
    print(f"[{name}] budget:     the destination's row (read every 0.5 s): {budget or 'never set'}")
    ok = [a.at for a in answers if a.status == 200]
    if ok:
        print(f"[{name}] duration:   :00 to the last accepted request {(max(ok) - phase.due).total_seconds():.2f} s")
    spent = reader.spent(phase.collection, phase.plan)
    print(
        f"[{name}] retries:    {spent.retried} attempts with retryCount > 0, {spent.failed} failed attempts (0 "
        f"expected); ledger: {spent.completed} Completed, {spent.waited_for_destination} with waitedFor Destination, "
        f"{spent.waiting} still Waiting"
    )
    print(f"[{name}] ledger:     while it ran, {deferred_line(phase)}")
    cost_lines(phase, executions, raw, (max(ok) - phase.due).total_seconds() if ok else 0.0)


def report_outage(
    phase: Phase,
    targets: PushbackTargets,
    reader: Reader,
    raw: float,
    up_at: datetime,
    until: datetime,
    args: argparse.Namespace,
) -> None:
    name = phase.name
    answers = [a for a in targets.answers("outage") if a.job in phase.plan]
    line, executions = accepted_line(phase, answers, until)
    before = sum(1 for a in answers if a.status == 200 and a.at < up_at)
    print(
        f"[{name}] {len(phase.plan)} one-shot jobs due {phase.due:%H:%M:%S}Z-{max(phase.plan.values()):%H:%M:%S}Z, "
        f"target down (500) until {up_at:%H:%M:%S}Z; retry policy Fixed PT{args.retry_interval}S x "
        f"{args.retry_count}; {line}, accepted before the target came back {before}"
    )
    failures = [a.at.timestamp() for a in answers if a.status != 200]
    if not failures:
        print(f"[{name}] no failure reached the target")
        return
    first_failure = min(failures)
    opened = opened_at(failures, PROBE_EVERY)
    row = f"{(phase.first_open.timestamp() - first_failure):.2f} s" if phase.first_open else "never seen"
    log = f"{opened - first_failure:.2f} s" if opened is not None else "never (no probe-spaced requests)"
    print(
        f"[{name}] circuit:    opened after the first failure (:{datetime.fromtimestamp(first_failure, UTC):%S.%f}"
        f"Z): from the target's log {log}; first read Open in the destination's row (every 0.5 s) {row}; "
        f"{sum(1 for t in failures if opened is None or t <= opened)} failures before it opened"
    )
    ok = sorted(a.at.timestamp() for a in answers if a.status == 200)
    if opened is not None:
        closing = [t for t in failures if t > opened] + ok[:1]
        gaps = [b - a for a, b in zip(closing, closing[1:], strict=False)]
        print(
            f"[{name}] while open: {len(closing)} requests (probes, the closing one included) in "
            f"{(closing[-1] - opened) if closing else 0:.1f} s; the most in any 5 s {most_within(closing, 5.0)}; "
            f"shortest gap {min(gaps, default=float('nan')):.2f} s (probe_every {PROBE_EVERY:g} s)"
        )
    if ok:
        back = up_at.timestamp()
        failed_jobs = {a.job for a in answers if a.status != 200}
        retried = sorted(a.at.timestamp() for a in answers if a.status == 200 and a.job in failed_jobs)
        held = sorted(a.at.timestamp() for a in answers if a.status == 200 and a.job not in failed_jobs)
        print(
            f"[{name}] recovery:   from the target's return to the first success {ok[0] - back:.2f} s, to the last "
            f"occurrence's success {ok[-1] - back:.2f} s; the {len(held)} that never failed (held while open) by "
            f"{(held[-1] - back) if held else float('nan'):.2f} s, the {len(retried)} that had failed (a retry "
            f"interval after their failure) by {(retried[-1] - back) if retried else float('nan'):.2f} s"
        )
    spent = reader.spent(phase.collection, phase.plan)
    print(
        f"[{name}] retries:    {spent.failed} failed attempts, {spent.retried} with retryCount > 0 (the most on "
        f"one attempt {spent.most_retries}); dead-lettered {reader.dead_letters(phase.collection)}; "
        f"ledger: {spent.completed} Completed, {spent.waiting} still Waiting"
    )
    print(f"[{name}] ledger:     while it ran, {deferred_line(phase)}")
    cost_lines(phase, executions, raw, ok[-1] - ok[0] if len(ok) > 1 else 0.0)


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
        for phase in phases:
            if phase.target == "budget":
                until = phase.due + timedelta(seconds=args.retry_after + 3 * args.jobs / args.rate + 60)
            else:
                until = up_at + timedelta(minutes=5)
            measure(harness, targets, reader, phase, until)
            if phase.target == "budget":
                report_herd(phase, targets, reader, raw, until, args)
            else:
                report_outage(phase, targets, reader, raw, up_at, until, args)
            sys.stdout.flush()
        if args.dump:
            with args.dump.open("w") as out:
                out.writelines(
                    f"{a.target}\t{a.job}\t{a.expected.isoformat()}\t{a.at.isoformat()}\t{a.status}\n"
                    for a in targets.answers()
                )


if __name__ == "__main__":
    main()
