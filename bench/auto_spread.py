"""Automatic spread (issue 40): a herd due at :00 against a destination with a budget, spread by its collection's
`autoSpread` over the tolerance, while other jobs due in the same seconds keep theirs.

Runs the real app under the local host (as `make run` does, bench/harness.py) against its own Azurite, creates
every phase's jobs first (far enough ahead that the minute timer, not the API, queues them), and records every
request at its local target, on loopback, with the status it was given. Each phase has two collections:

- the herd's (api-version 2026-12-01-preview): `targetRateLimits` 127.0.0.1 at `--rate` (50) requests/s, and
  `autoSpread: {"tolerance": --tolerance}` (PT30S); `--jobs` (1,000) one-shot jobs due at :00 of one minute,
  aimed at pushback's budget target (bench/pushback_targets.py: 200 after `--delay`, 0.5 s, to at most `--rate`
  requests in any sliding second, 429 with `Retry-After: --retry-after`, 5, above), with pushback's retry policy;
- the others' (no autoSpread, no rule): `--others` (150) one-shot jobs due over the seconds :00 to :29 of the
  same minute (5 a second), aimed at a target answering at once (bench/targets.py) addressed as `localhost`, so
  the 127.0.0.1 rule does not apply to them.

Phases (`--phases spread,pacing`, default spread): spread as above; pacing, the same without autoSpread (the rule
alone paces the herd, for contrast). Reported per phase: the herd accepted, lost, duplicated, refused (429); the
most requests in any sliding second; its first and last request after :00 and whether it finished within the
tolerance (its last accepted request before :00 + tolerance + 1 s: the last second an occurrence may be placed at
is :00 + tolerance); its requests per second (accepted/all) for the first 30 s; the others' lateness at their
target (arrival minus due second: p50, p99, max), lost, duplicated; storage requests, function invocations and
the local host's CPU per execution (herd and others), counted from one second before the tick that dispatches the
phase to the end of its 20 s duplicate watch, beside raw storage measured in the same run (bench/pushback.py's).
Recorded (bench/figures.py, when BENCH_FIGURES names a file) as bench "auto_spread", one phase per --phases name;
its `lateness_s` is the others'.

    .venv/bin/python bench/auto_spread.py [--phases spread,pacing] [--jobs 1000 --rate 50 --others 150]
        [--tolerance PT30S] [--delay 0.5] [--dump requests.tsv]
    .venv/bin/python bench/auto_spread.py --jobs 200 --rate 20 --others 30      # scaled down

Done when (issue 40): with automatic spread, a 1,000-job :00 herd against a 50/s destination finishes within the
tolerance while other jobs keep p99 <= 0.1 s. Figures, not tests: nothing here asserts.
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
from bench.harness import Harness, lateness_figures, lateness_line, next_minute, one_shot, pause_until  # noqa: E402
from bench.idle import raw_round_trip  # noqa: E402
from bench.limits import limited_collection  # noqa: E402
from bench.phase_figures import num, raw_read  # noqa: E402
from bench.pushback import Phase, jobs_of  # noqa: E402
from bench.pushback_report import accepted_line, cost_lines  # noqa: E402
from bench.pushback_targets import Answer, PushbackTargets  # noqa: E402
from bench.pushback_watch import densest, most_within  # noqa: E402
from bench.targets import Arrival  # noqa: E402
from shared.model.durations import format_duration, parse_duration  # noqa: E402

WATCH = timedelta(seconds=20)  # duplicates watched for after the last request
HISTOGRAM = 30  # seconds from :00 shown request by request
OTHERS_OVER = 30  # the others are due over the seconds :00 to :29


@dataclass
class SpreadPhase(Phase):
    """A pushback herd phase (the herd's collection and plan) with the others beside it."""

    auto_spread: bool = True
    others_collection: str = ""
    others: dict[str, datetime] = field(default_factory=dict)  # job -> due


def make_phase(name: str, due: datetime, args: argparse.Namespace) -> SpreadPhase:
    herd = {f"{name[0]}h{n:04d}": due for n in range(args.jobs)}
    others = {f"{name[0]}o{n:04d}": due + timedelta(seconds=n * OTHERS_OVER // args.others) for n in range(args.others)}
    return SpreadPhase(
        name,
        f"{name}-herd",
        "budget",
        herd,
        auto_spread=name == "spread",
        others_collection=f"{name}-others",
        others=others,
    )


def create(harness: Harness, targets: PushbackTargets, phase: SpreadPhase, args: argparse.Namespace) -> None:
    properties: dict[str, object] = {"targetRateLimits": [{"host": "127.0.0.1", "requestsPerSecond": args.rate}]}
    if phase.auto_spread:
        properties["autoSpread"] = {"tolerance": format_duration(args.tolerance)}
    limited_collection(harness, phase.collection, properties)
    harness.create_jobs(jobs_of(phase, targets.url("budget"), args))
    harness.collection(phase.others_collection)
    others_url = f"http://localhost:{harness.targets.ports['others']}/fire"  # not 127.0.0.1: the rule's host
    harness.create_jobs((phase.others_collection, job, one_shot(due, others_url)) for job, due in phase.others.items())


def others_of(harness: Harness, phase: SpreadPhase) -> list[Arrival]:
    return [a for a in harness.targets.arrivals() if a.job in phase.others]


def measure(harness: Harness, targets: PushbackTargets, phase: SpreadPhase, until: datetime) -> None:
    """From one second before the tick that dispatches the phase until the herd was accepted and every other job
    arrived (or `until`), then the duplicate watch."""
    phase.late_start = not pause_until(phase.due - timedelta(minutes=1, seconds=1))
    requests, invocations, kinds = harness.requests(), harness.invocations(), harness.kinds()
    cpu = harness.host_cpu_seconds()
    while datetime.now(UTC) < until:
        accepted = {a.job for a in targets.answers("budget") if a.job in phase.plan and a.status == 200}
        if len(accepted) == len(phase.plan) and len({a.job for a in others_of(harness, phase)}) == len(phase.others):
            break
        time.sleep(0.5)
    seen = [a.at for a in targets.answers("budget") if a.job in phase.plan] + [a.at for a in others_of(harness, phase)]
    pause_until(max(datetime.now(UTC), max(seen, default=datetime.now(UTC)) + WATCH))
    phase.requests = harness.requests() - requests
    phase.invocations = harness.invocations() - invocations
    phase.kinds = harness.kinds() - kinds
    phase.host_cpu_s = harness.host_cpu_seconds() - cpu


def report(
    harness: Harness,
    targets: PushbackTargets,
    phase: SpreadPhase,
    raw: float,
    until: datetime,
    args: argparse.Namespace,
) -> dict[str, Any]:
    name, zero = phase.name, phase.due.timestamp()
    tolerance = args.tolerance.total_seconds()
    answers = [a for a in targets.answers("budget") if a.job in phase.plan]
    line, herd = accepted_line(phase, answers, until)
    accepted = herd["executions"]
    refused = sum(1 for a in answers if a.status == 429)
    figures: dict[str, Any] = {
        "auto_spread": phase.auto_spread,
        "tolerance_s": tolerance,
        "budget_per_s": args.rate,
        "herd_jobs": herd["jobs"],
        "herd_accepted": accepted,
        "herd_lost": herd["lost"],
        "herd_duplicated": herd["duplicated"],
        "herd_refused": refused,
        "count_window_started_late": phase.late_start,
    }
    how = f"autoSpread {format_duration(args.tolerance)} and " if phase.auto_spread else "no autoSpread, "
    print(
        f"[{name}] herd:       {len(phase.plan)} jobs due at {phase.due:%H:%M:%S}Z ({how}rule 127.0.0.1 at "
        f"{args.rate}/s); {line}, refused (429) {refused}"
    )
    instants = sorted(a.at.timestamp() - zero for a in answers)
    ok = sorted(a.at.timestamp() - zero for a in answers if a.status == 200)
    if instants:
        most, start = densest(instants, 1.0)
        figures |= {
            "most_per_second": most,
            "most_per_second_from_s": num(start, 2),
            "most_accepted_per_second": most_within(ok, 1.0),
        }
        print(
            f"[{name}] rate:       most requests in any sliding second {most} (from :00 + {start:.2f} s; budget "
            f"{args.rate}), accepted ones only {most_within(ok, 1.0)}"
        )
        last = ok[-1] if ok else float("nan")
        within = "yes" if ok and len(ok) == len(phase.plan) and last < tolerance + 1 else "NO"
        figures |= {
            "first_request_s": num(instants[0], 2),
            "last_request_s": num(instants[-1], 2),
            "last_accepted_s": num(last, 2),
            "within_tolerance": within == "yes",
        }
        print(
            f"[{name}] span:       first request at :00 + {instants[0]:.2f} s, last {instants[-1]:.2f} s, last "
            f"accepted {last:.2f} s; finished within the tolerance ({tolerance:g} s; every occurrence accepted "
            f"before :00 + {tolerance + 1:g} s): {within}"
        )
    every = Counter(int(t) for t in instants if t >= 0)
    taken = Counter(int(t) for t in ok if t >= 0)
    early = sum(1 for t in instants if t < 0)
    histogram = " ".join(f"{taken[s]}/{every[s]}" for s in range(HISTOGRAM))
    beyond = sum(n for s, n in every.items() if s >= HISTOGRAM)
    print(f"[{name}] per second from :00 (accepted/all): {histogram}; later {beyond}, before :00 {early}")
    figures |= {
        "per_second_accepted": [taken[s] for s in range(HISTOGRAM)],
        "per_second_all": [every[s] for s in range(HISTOGRAM)],
        "requests_later": beyond,
        "requests_before_00": early,
    }

    arrivals = others_of(harness, phase)
    lateness_values = [(a.at - phase.others[a.job]).total_seconds() for a in arrivals]
    seen = Counter(a.job for a in arrivals)
    print(
        f"[{name}] others:     {len(seen)}/{len(phase.others)} arrived, lost {len(phase.others) - len(seen)}, "
        f"duplicated {sum(n - 1 for n in seen.values())}; lateness (arrival minus due second) "
        f"{lateness_line(lateness_values)}"
    )
    others_lost, others_doubled = len(phase.others) - len(seen), sum(n - 1 for n in seen.values())
    executions = accepted + len(seen)
    ends = [a.at for a in answers if a.status == 200] + [a.at for a in arrivals]
    figures |= {
        "others": len(phase.others),
        "others_arrived": len(seen),
        "others_lost": others_lost,
        "others_duplicated": others_doubled,
        "lateness_s": lateness_figures(lateness_values),  # the others': the herd is placed, not late
        "executions": executions,
        "lost": herd["lost"] + others_lost,
        "duplicated": herd["duplicated"] + others_doubled,
    }
    return figures | cost_lines(phase, executions, raw, (max(ends) - phase.due).total_seconds() if ends else 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", default="spread", help="comma-separated: spread, pacing")
    parser.add_argument("--jobs", type=int, default=1000, help="the herd's jobs, due at :00")
    parser.add_argument("--rate", type=int, default=50, help="the rule's requests/s, and what the herd's target takes")
    parser.add_argument("--tolerance", type=parse_duration, default=timedelta(seconds=30), help="ISO 8601, PT30S")
    parser.add_argument("--others", type=int, default=150, help="jobs due over :00 to :29 at another host")
    parser.add_argument("--retry-after", type=int, default=5, help="seconds, in the herd target's 429 answers")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the herd's target takes to answer")
    parser.add_argument("--retry-interval", type=int, default=30, help="the herd's Fixed retry interval, seconds")
    parser.add_argument("--retry-count", type=int, default=10)
    parser.add_argument("--dump", type=Path, help="write every request the targets saw here (TSV) at the end")
    args = parser.parse_args()
    chosen = [p.strip() for p in args.phases.split(",") if p.strip()]
    if not chosen or set(chosen) - {"spread", "pacing"} or len(set(chosen)) < len(chosen):
        parser.error("--phases takes spread, pacing or both")
    if args.jobs < 1 or args.others < 1 or args.rate < 1:
        parser.error("--jobs, --others and --rate must be at least 1")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the host, targets and Azurite on a kill

    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        harness = stack.enter_context(Harness(Path(tmp), {"others": 0.0}))
        total = len(chosen) * (args.jobs + args.others)
        due = next_minute(datetime.now(UTC), timedelta(minutes=2, seconds=30 + total / 40))
        phases: list[tuple[SpreadPhase, datetime]] = []
        for name in chosen:
            span = max(args.tolerance.total_seconds(), 3 * args.jobs / args.rate, OTHERS_OVER)
            until = due + timedelta(seconds=span + args.retry_after + 60)
            phases.append((make_phase(name, due, args), until))
            # The next phase's count window (from a minute and a second before it) starts after this one's watch.
            due = next_minute(until + WATCH, timedelta(minutes=1, seconds=1))
        targets = PushbackTargets(Path(tmp), args.rate, args.retry_after, args.delay, 0.0).start()
        stack.callback(targets.stop)
        started = time.perf_counter()
        for phase, _ in phases:
            create(harness, targets, phase, args)
        raw = raw_round_trip(harness)  # straight to Azurite, before any phase's count window
        print(
            f"created {total} jobs in {time.perf_counter() - started:.1f} s; phases at "
            + ", ".join(f"{p.name} {p.due:%H:%M:%S}Z" for p, _ in phases),
            flush=True,
        )
        figures: dict[str, dict[str, Any]] = {}
        for phase, until in phases:
            measure(harness, targets, phase, until)
            figures[phase.name] = report(harness, targets, phase, raw, until, args)
            sys.stdout.flush()
        if args.dump:
            with args.dump.open("w") as out:
                out.writelines(a.tsv() for a in targets.answers())
                out.writelines(Answer("others", a.job, a.expected, a.at, 200).tsv() for a in harness.targets.arrivals())
    record("auto_spread", figures, raw_read(raw))


if __name__ == "__main__":
    main()
