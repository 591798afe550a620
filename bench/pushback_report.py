"""What bench/pushback.py (and bench/auto_spread.py) print of a phase once it is over, and the same figures as the
dict they record (bench/phase_figures.py's shapes): accepted, lost, duplicated; the herd's rate and budget; the
outage's circuit and recovery; retries and ledger entries; storage requests, function invocations and host CPU per
execution beside raw storage measured in the same run.
"""

from __future__ import annotations

import argparse
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bench.harness import kinds_line
from bench.phase_figures import cost, cpu_text, num
from bench.pushback_targets import Answer, PushbackTargets
from bench.pushback_watch import Reader, densest, most_within, opened_at
from shared.timings import Timings

if TYPE_CHECKING:
    from bench.pushback import Phase

PROBE_EVERY = Timings().circuit_probe_every.total_seconds()  # the host's default


def accepted_line(phase: Phase, answers: list[Answer], until: datetime) -> tuple[str, dict[str, Any]]:
    """The line, and its figures: jobs, executions (accepted), lost, duplicated."""
    taken = Counter(a.job for a in answers if a.status == 200)
    lost = len(phase.plan) - len(taken)
    doubled = sum(n - 1 for n in taken.values())
    flag = " (its count window started late: the counts miss part of its dispatch)" if phase.late_start else ""
    line = (
        f"accepted {len(taken)}/{len(phase.plan)}, lost {lost} (not accepted by the end of its window, "
        f"{until:%H:%M:%S}Z), duplicated {doubled}{flag}"
    )
    figures = {
        "jobs": len(phase.plan),
        "executions": len(taken),
        "lost": lost,
        "duplicated": doubled,
        "count_window_started_late": phase.late_start,
    }
    return line, figures


def cost_lines(phase: Phase, executions: int, raw: float, seconds: float) -> dict[str, Any]:
    n = max(executions, 1)
    rate = executions / seconds if seconds > 0 else float("nan")
    print(
        f"[{phase.name}] cost:       {phase.requests / n:.2f} storage requests and {phase.invocations / n:.3f} "
        f"function invocations per execution ({phase.requests} requests, {phase.invocations} invocations, "
        f"{executions} executions); raw storage in the same run: a single-entity read {raw * 1000:.2f} ms (p50), "
        f"{1 / raw:.0f} operations/s; executions/s {rate:.1f} vs raw {1 / raw:.0f} = {rate * raw:.3f}; "
        f"{cpu_text(phase.host_cpu_s, executions)}"
    )
    print(f"[{phase.name}] requests:   {kinds_line(phase.kinds, executions)}")
    return {
        **cost(phase.requests, phase.invocations, phase.kinds, executions, phase.host_cpu_s),
        "executions_per_s": num(rate, 2),
        "ratio_to_raw": num(rate * raw, 4),
    }


def deferred_line(phase: Phase) -> tuple[str, dict[str, Any]]:
    example = min(phase.deferred.entries, default=("", "none"))[1]
    line = (
        f"{len(phase.deferred.entries)} distinct Deferred entries of {len(phase.deferred.jobs)} jobs in "
        f'{phase.deferred.reads} ledger reads; e.g. "{example}"'
    )
    figures = {
        "deferred_entries": len(phase.deferred.entries),
        "deferred_jobs": len(phase.deferred.jobs),
        "ledger_reads": phase.deferred.reads,
    }
    return line, figures


def report_herd(
    phase: Phase, targets: PushbackTargets, reader: Reader, raw: float, until: datetime, args: argparse.Namespace
) -> dict[str, Any]:
    name = phase.name
    answers = [a for a in targets.answers("budget") if a.job in phase.plan]
    line, figures = accepted_line(phase, answers, until)
    refused = [a for a in answers if a.status == 429]
    figures["refused"] = len(refused)
    print(f"[{name}] {len(phase.plan)} jobs due at {phase.due:%H:%M:%S}Z; {line}, refused (429) {len(refused)}")
    instants = [a.at.timestamp() for a in answers]
    if refused:
        t0 = min(a.at.timestamp() for a in refused)
        first = sum(1 for t in instants if t0 <= t < t0 + 1)
        first_refused = sum(1 for a in refused if t0 <= a.at.timestamp() < t0 + 1)
        later = [t for t in instants if t >= t0 + 1]
        most, start = densest(later, 1.0)
        inside = sum(1 for a in refused if start <= a.at.timestamp() < start + 1)
        overall = most_within(instants, 1.0)
        print(
            f"[{name}] rate:       most requests in any sliding second after the first second of throttling "
            f"{most} (budget {args.rate}; from :00 + {start - phase.due.timestamp():.2f} s, {inside} of them "
            f"refused); in the first second of throttling {first} "
            f"({first_refused} refused); in any sliding second overall {overall}; the first 429 "
            f"at :00 + {t0 - phase.due.timestamp():.2f} s"
        )
        figures |= {
            "budget_per_s": args.rate,
            "most_per_second_after_first_throttled": most,
            "most_per_second_after_first_throttled_from_s": num(start - phase.due.timestamp(), 2),
            "most_per_second_after_first_throttled_refused": inside,
            "first_throttled_second_requests": first,
            "first_throttled_second_refused": first_refused,
            "most_per_second_overall": overall,
            "first_429_after_s": num(t0 - phase.due.timestamp(), 2),
        }
    by_second = Counter(int(t - phase.due.timestamp()) for t in instants)
    ok_second = Counter(int(a.at.timestamp() - phase.due.timestamp()) for a in answers if a.status == 200)
    span = range(min(by_second, default=0), max(by_second, default=-1) + 1)
    print(f"[{name}] per second from :00 (accepted/all): {' '.join(f'{ok_second[s]}/{by_second[s]}' for s in span)}")
    figures |= {
        "per_second_from_s": span.start,
        "per_second_accepted": [ok_second[s] for s in span],
        "per_second_all": [by_second[s] for s in span],
        "budget_rates": [[num(at, 1), num(rate, 2)] for at, rate in phase.rates[:8]],
    }
    budget = ", ".join(f"{rate:.2f}/s at :00 + {at:.1f} s" for at, rate in phase.rates[:8])
    print(f"[{name}] budget:     the destination's row (read every 0.5 s): {budget or 'never set'}")
    ok = [a.at for a in answers if a.status == 200]
    if ok:
        figures["duration_s"] = num((max(ok) - phase.due).total_seconds(), 2)
        print(f"[{name}] duration:   :00 to the last accepted request {(max(ok) - phase.due).total_seconds():.2f} s")
    spent = reader.spent(phase.collection, phase.plan)
    print(
        f"[{name}] retries:    {spent.retried} attempts with retryCount > 0, {spent.failed} failed attempts (0 "
        f"expected); ledger: {spent.completed} Completed, {spent.waited_for_destination} with waitedFor Destination, "
        f"{spent.waiting} still Waiting"
    )
    figures |= {
        "retried_attempts": spent.retried,
        "failed_attempts": spent.failed,
        "ledger_completed": spent.completed,
        "ledger_waited_for_destination": spent.waited_for_destination,
        "ledger_waiting": spent.waiting,
    }
    deferred, deferred_figures = deferred_line(phase)
    print(f"[{name}] ledger:     while it ran, {deferred}")
    seconds = (max(ok) - phase.due).total_seconds() if ok else 0.0
    return figures | deferred_figures | cost_lines(phase, figures["executions"], raw, seconds)


def report_outage(
    phase: Phase,
    targets: PushbackTargets,
    reader: Reader,
    raw: float,
    up_at: datetime,
    until: datetime,
    args: argparse.Namespace,
) -> dict[str, Any]:
    name = phase.name
    answers = [a for a in targets.answers("outage") if a.job in phase.plan]
    line, figures = accepted_line(phase, answers, until)
    before = sum(1 for a in answers if a.status == 200 and a.at < up_at)
    print(
        f"[{name}] {len(phase.plan)} one-shot jobs due {phase.due:%H:%M:%S}Z-{max(phase.plan.values()):%H:%M:%S}Z, "
        f"target down (500) until {up_at:%H:%M:%S}Z; retry policy Fixed PT{args.retry_interval}S x "
        f"{args.retry_count}; {line}, accepted before the target came back {before}"
    )
    figures |= {"down_s": args.down, "accepted_before_up": before}
    failures = [a.at.timestamp() for a in answers if a.status != 200]
    figures["failures"] = len(failures)
    if not failures:
        print(f"[{name}] no failure reached the target")
        return figures
    first_failure = min(failures)
    opened = opened_at(failures, PROBE_EVERY)
    row = f"{(phase.first_open.timestamp() - first_failure):.2f} s" if phase.first_open else "never seen"
    log = f"{opened - first_failure:.2f} s" if opened is not None else "never (no probe-spaced requests)"
    before_open = sum(1 for t in failures if opened is None or t <= opened)
    print(
        f"[{name}] circuit:    opened after the first failure (:{datetime.fromtimestamp(first_failure, UTC):%S.%f}"
        f"Z): from the target's log {log}; first read Open in the destination's row (every 0.5 s) {row}; "
        f"{before_open} failures before it opened"
    )
    figures |= {
        "circuit_opened_after_s": num(opened - first_failure, 2) if opened is not None else None,
        "circuit_read_open_after_s": (
            num(phase.first_open.timestamp() - first_failure, 2) if phase.first_open else None
        ),
        "failures_before_open": before_open,
    }
    ok = sorted(a.at.timestamp() for a in answers if a.status == 200)
    if opened is not None:
        closing = [t for t in failures if t > opened] + ok[:1]
        gaps = [b - a for a, b in zip(closing, closing[1:], strict=False)]
        print(
            f"[{name}] while open: {len(closing)} requests (probes, the closing one included) in "
            f"{(closing[-1] - opened) if closing else 0:.1f} s; the most in any 5 s {most_within(closing, 5.0)}; "
            f"shortest gap {min(gaps, default=float('nan')):.2f} s (probe_every {PROBE_EVERY:g} s)"
        )
        figures |= {
            "while_open_requests": len(closing),
            "while_open_s": num((closing[-1] - opened) if closing else 0, 1),
            "while_open_most_in_5_s": most_within(closing, 5.0),
            "while_open_shortest_gap_s": num(min(gaps, default=float("nan")), 2),
            "probe_every_s": PROBE_EVERY,
        }
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
        figures |= {
            "recovery_first_s": num(ok[0] - back, 2),
            "recovery_last_s": num(ok[-1] - back, 2),
            "never_failed": len(held),
            "never_failed_by_s": num(held[-1] - back, 2) if held else None,
            "had_failed": len(retried),
            "had_failed_by_s": num(retried[-1] - back, 2) if retried else None,
        }
    spent = reader.spent(phase.collection, phase.plan)
    dead = reader.dead_letters(phase.collection)
    print(
        f"[{name}] retries:    {spent.failed} failed attempts, {spent.retried} with retryCount > 0 (the most on "
        f"one attempt {spent.most_retries}); dead-lettered {dead}; "
        f"ledger: {spent.completed} Completed, {spent.waiting} still Waiting"
    )
    figures |= {
        "failed_attempts": spent.failed,
        "retried_attempts": spent.retried,
        "most_retries": spent.most_retries,
        "dead_lettered": dead,
        "ledger_completed": spent.completed,
        "ledger_waiting": spent.waiting,
    }
    deferred, deferred_figures = deferred_line(phase)
    print(f"[{name}] ledger:     while it ran, {deferred}")
    seconds = ok[-1] - ok[0] if len(ok) > 1 else 0.0
    return figures | deferred_figures | cost_lines(phase, figures["executions"], raw, seconds)
