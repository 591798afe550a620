"""A sustained load at a fixed rate, and a collection disabled in the middle of it.

Runs the real app under the local host (as `make run` does) against its own Azurite, with every-minute jobs
spread over the seconds of the minute (job n at second n % 60), `--rate` x 60 of them in collections of
1,000, so the load is `--rate` executions per second, every second. After `--minutes` measured minutes one
collection is disabled through the API while the load runs, and the run goes on for one more minute.

Reports, per measured minute: executions that arrived at the target for the minute's occurrences, those not arrived
by the end of the run (`not_arrived`: lost when the run carried its rate; at a rate the host cannot carry, mostly
the backlog the run ends with, which this bench does not wait out), duplicated occurrences, lateness at the target
(p50/p99/max); over the measured minutes: executions per second (and over raw storage's operations per second, a
single-entity read's p50 measured straight to Azurite before the load: `ratio_to_raw`), lateness over them all,
storage requests per execution (everything the app does, counted on the wire, by kind: tables, queues and blobs,
over exactly the measured minutes), function invocations and the local host's CPU per execution (its worker
processes' included), and Azurite's (`storage_cpu_*`: per execution and as a share of the one thread it answers on,
which near 1 says the local storage emulator bounded the run, not the app); then how long the disable took to answer
and whether any occurrence of the disabled collection due after the answer (and its collection read's freshness,
1 s, and the lead with which an attempt gets ready, 2 ms for each attempt of its worker due at that second) arrived.
Duplicates are watched for 20 s after the last occurrence. Run by bench/report.py, it records every figure it prints
in docs/figures.json (bench/figures.py): phase `steady-<rate>` (the offered rate, and `workers`: the local host's
FUNCTIONS_WORKER_PROCESS_COUNT, devhost/workers.py), `disable` and `create`.

    python bench/steady.py [--rate 100] [--minutes 3] [--delay 0] [--workers 1]

Targets (issue 22): 100 executions/s for 3 minutes with p99 <= 1 s in every minute, nothing lost or
doubled, <= 3 storage requests per execution; the disable of a 1,000-job collection answers in <= 2 s and
nothing of it fires afterwards. Figures, not tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import math
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import record  # noqa: E402
from bench.harness import (  # noqa: E402
    Harness,
    every_minute,
    kinds_line,
    lateness_figures,
    lateness_line,
    next_minute,
    pause_until,
    per_execution,
)
from bench.idle import raw_round_trip  # noqa: E402
from bench.phase_figures import num, raw_read, storage_cpu_figures  # noqa: E402
from bench.targets import Arrival  # noqa: E402
from shared.timings import Timings  # noqa: E402

COLLECTION_SIZE = 1000
WATCH = timedelta(seconds=20)
TIMINGS = Timings()  # the host's defaults
FRESH = TIMINGS.collection_fresh  # the executor's collection reads answer for this long


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=100, help="executions per second")
    parser.add_argument("--minutes", type=int, default=3, help="measured minutes")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds the target takes to answer")
    parser.add_argument("--arrivals", help="write every arrival here (job, due, arrived; CSV) after the minutes")
    parser.add_argument("--host-log", help="copy the local host's log here at the end")
    parser.add_argument(
        "--workers", type=int, default=1, help="the local host's worker processes (FUNCTIONS_WORKER_PROCESS_COUNT)"
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    jobs = args.rate * 60
    with (
        tempfile.TemporaryDirectory() as tmp,
        Harness(Path(tmp), {"target": args.delay}, workers=args.workers) as harness,
    ):
        url = harness.targets.url("target")
        raw = raw_round_trip(harness)  # straight to Azurite, before the load
        print(f"raw storage: a single-entity read {raw * 1000:.2f} ms ({1 / raw:.0f} operations/s)", flush=True)
        collections = [f"s{n}" for n in range((jobs + COLLECTION_SIZE - 1) // COLLECTION_SIZE)]
        for name in collections:
            harness.collection(name)
        # Long enough ahead that the minute timer, not the API, queues the first occurrences.
        first = next_minute(datetime.now(UTC), timedelta(minutes=2, seconds=30) + timedelta(seconds=jobs / 60))
        home = {f"r{n}": collections[n // COLLECTION_SIZE] for n in range(jobs)}
        took = harness.create_jobs(
            (home[name], name, every_minute(first + timedelta(seconds=n % 60), url)) for n, name in enumerate(home)
        )
        print(
            f"created {jobs} every-minute jobs in {len(collections)} collections in {took:.1f} s "
            f"({jobs / took:.0f} PUT/s); first occurrences at {first:%H:%M}Z; "
            f"{args.workers} worker process(es) (FUNCTIONS_WORKER_PROCESS_COUNT)",
            flush=True,
        )
        late = datetime.now(UTC) > first - timedelta(minutes=1, seconds=50)
        if late:
            print("warning: the jobs were created late; the API, not the timer, queued the first occurrences")
        create = {"jobs": jobs, "collections": len(collections), "seconds": round(took, 1)}
        create |= {"puts_per_s": round(jobs / took, 1), "created_late": late}

        end = first + timedelta(minutes=args.minutes)
        # Costs are counted over exactly the measured minutes, [first - 1 s, end - 1 s): the minute ticks at
        # `first` .. `end` - 1 min, each dispatching the minute after it, as many as the minutes whose executions
        # are counted (the tick at `end` would add a minute of dispatch to them).
        rss = sample_until(harness, first - timedelta(seconds=1), 0.0)
        requests, invocations, kinds = harness.requests(), harness.invocations(), harness.kinds()
        cpu, storage_cpu = harness.host_cpu_seconds(), harness.storage_cpu_seconds()
        rss = sample_until(harness, end - timedelta(seconds=1), rss)
        used = harness.requests() - requests
        invoked = harness.invocations() - invocations
        by_kind = harness.kinds() - kinds
        cpu, storage_cpu = harness.host_cpu_seconds() - cpu, harness.storage_cpu_seconds() - storage_cpu
        rss = sample_until(harness, end + timedelta(seconds=5), rss)
        steady = report(harness.targets.arrivals(), home, first, args.minutes, used, invoked, by_kind, rss, cpu)
        steady |= storage_cpu_figures("steady", storage_cpu, steady["executions"], steady["seconds"])
        # Executions carried a second over raw storage's operations a second, as fire.py's ratio.
        steady["ratio_to_raw"] = num(steady["executions_per_s"] * raw, 4)
        steady["rate_per_s"] = args.rate
        steady["target_delay_s"] = args.delay
        steady["workers"] = args.workers
        phases: dict[str, dict[str, Any]] = {f"steady-{args.rate}": steady, "create": create}
        sys.stdout.flush()
        if args.arrivals:
            with open(args.arrivals, "w") as out:
                arrived = harness.targets.arrivals()
                out.writelines(f"{a.job},{a.expected.isoformat()},{a.at.isoformat()}\n" for a in arrived)

        # The disable, under the same load, then one more minute (and the duplicate watch).
        victim = collections[-1]
        try:
            status, seconds, answered = harness.post(victim, "disable")
        except OSError as error:
            print(f"[disable] POST disable of {victim} under the load failed: {error!r}")
            record("steady", {**phases, "disable": {"failed": repr(error)}}, raw_read(raw))
            return
        after = end + timedelta(minutes=1)
        pause_until(after + WATCH)
        arrivals = harness.targets.arrivals()
        watched = report(arrivals, home, first, args.minutes, used, invoked, by_kind, rss, cpu, quiet=True)
        for minute, doubled in zip(steady["by_minute"], watched["by_minute"], strict=True):
            minute["duplicated"] = doubled["duplicated"]  # seen by the end of the watch
        steady["duplicated"] = watched["duplicated"]
        if args.host_log:
            shutil.copy(harness.log_path, args.host_log)

    late_ones = [a for a in arrivals if home.get(a.job) == victim and a.at > answered]
    # An attempt asks for its collection's state when it gets ready, ahead of its second by a lead that grows with the
    # attempts of its worker due at that second (a worker's share of the rate): that lead widens the window.
    lead = TIMINGS.ready_lead(math.ceil(args.rate / args.workers))
    due_after = [a for a in late_ones if a.expected > answered + FRESH + lead]
    print(
        f"[disable] POST disable of {victim} ({list(home.values()).count(victim)} jobs) under the load: {status} "
        f"in {seconds:.2f} s; "
        f"arrivals of it after the answer: {len(late_ones)} (due up to "
        f"{max((a.expected for a in late_ones), default=answered):%H:%M:%S}Z, answer at {answered:%H:%M:%S.%f}Z), "
        f"of which due more than {(FRESH + lead).total_seconds():g} s after the answer (the collection read's "
        f"freshness, {FRESH.total_seconds():g} s, and a second's lead, {lead.total_seconds():g} s): {len(due_after)}"
    )
    others = [a for a in arrivals if home.get(a.job) != victim and end <= a.expected < after]
    others_late = [(a.at - a.expected).total_seconds() for a in others]
    print(
        f"[disable] the other collections in the minute after: {len(others)} executions, lateness "
        f"{lateness_line(others_late)}"
    )
    phases["disable"] = {
        "jobs": list(home.values()).count(victim),
        "status": status,
        "answer_s": round(seconds, 3),
        "arrivals_after_answer": len(late_ones),
        "due_after_freshness": len(due_after),
        "freshness_s": FRESH.total_seconds(),
        "lead_s": lead.total_seconds(),
        "others_executions": len(others),
        "others_lateness_s": lateness_figures(others_late),
    }
    record("steady", phases, raw_read(raw))


def sample_until(harness: Harness, instant: datetime, rss: float) -> float:
    """Wait until `instant`, sampling the host's RSS every second; the peak so far."""
    while (left := (instant - datetime.now(UTC)).total_seconds()) > 0:
        time.sleep(min(left, 1.0))
        rss = max(rss, harness.host_rss_mb())
    return rss


def report(
    arrivals: list[Arrival],
    home: dict[str, str],
    first: datetime,
    minutes: int,
    used: int,
    invoked: int,
    kinds: Counter[str],
    rss: float,
    cpu: float,
    quiet: bool = False,
) -> dict[str, Any]:
    """Per measured minute; `quiet`: only duplicates that showed up since (the watch after the last minute).
    Returns the figures printed, for bench/figures.py (`quiet`: only the duplicates)."""
    jobs = len(home)
    total = 0
    by_minute: list[dict[str, Any]] = []
    for minute in range(minutes):
        start = first + timedelta(minutes=minute)
        these = [a for a in arrivals if a.job in home and start <= a.expected < start + timedelta(minutes=1)]
        seen = Counter((a.job, a.expected) for a in these)
        lateness = [(a.at - a.expected).total_seconds() for a in these]
        total += len(these)
        doubled = sum(n - 1 for n in seen.values())
        by_minute.append(
            {
                "minute": minute + 1,
                "arrived": len(seen),
                "not_arrived": jobs - len(seen),
                "duplicated": doubled,
                "early": sum(1 for x in lateness if x < 0),
                "lateness_s": lateness_figures(lateness),
            }
        )
        if quiet:
            if doubled:
                print(f"[steady] minute {minute + 1}: {doubled} duplicated, seen by the end of the watch")
            continue
        print(
            f"[steady] minute {minute + 1} ({start:%H:%M}Z): {len(seen)}/{jobs} occurrences arrived, "
            f"{jobs - len(seen)} not arrived by the end of the run, {doubled} duplicated, "
            f"{sum(1 for x in lateness if x < 0)} early; lateness {lateness_line(lateness)}"
        )
    duplicated = sum(m["duplicated"] for m in by_minute)
    if quiet:
        return {"by_minute": by_minute, "duplicated": duplicated}
    # Where in the minute lateness comes from (the minute's dispatch of the next one runs at its start).
    measured = [a for a in arrivals if a.job in home and first <= a.expected < first + timedelta(minutes=minutes)]
    slices = []
    by_second: dict[str, float | None] = {}
    for low in range(0, 60, 10):
        late = sorted((a.at - a.expected).total_seconds() for a in measured if low <= a.expected.second < low + 10)
        slices.append(f"{low:02}-{low + 9:02} s {late[int(0.99 * (len(late) - 1))]:.2f}" if late else f"{low:02} s -")
        by_second[f"{low:02}-{low + 9:02}"] = round(late[int(0.99 * (len(late) - 1))], 4) if late else None
    print(f"[steady] lateness p99 by second of the minute: {', '.join(slices)}")
    seconds = minutes * 60
    all_late = [(a.at - a.expected).total_seconds() for a in measured]
    cpu_ms = per_execution(cpu * 1000, total, 3)
    print(
        f"[steady] over the {minutes} minutes: lateness {lateness_line(all_late)}; host CPU "
        f"{'-' if cpu_ms is None else f'{cpu_ms:.2f}'} ms per execution ({cpu:.1f} s in {seconds} s)"
    )
    print(
        f"[steady] {total} executions in {seconds} s: {total / seconds:.1f} executions/s; "
        f"{used / max(total, 1):.2f} storage requests and {invoked / max(total, 1):.3f} function invocations "
        f"per execution ({used} requests, {invoked} invocations); host RSS peak {rss:.0f} MB"
    )
    print(f"[steady] requests per execution by kind: {kinds_line(kinds, total)}")
    return {
        "jobs": jobs,
        "measured_minutes": minutes,
        "seconds": seconds,
        "executions": total,
        "executions_per_s": round(total / seconds, 2),
        "not_arrived": sum(m["not_arrived"] for m in by_minute),
        "duplicated": duplicated,
        "early": sum(m["early"] for m in by_minute),
        "lateness_s": lateness_figures(all_late),
        "lateness_p99_by_second_s": by_second,
        "by_minute": by_minute,
        "storage_requests": used,
        "invocations": invoked,
        "storage_requests_per_execution": per_execution(used, total),
        "invocations_per_execution": per_execution(invoked, total),
        "storage_requests_by_kind": {kind: per_execution(n, total) for kind, n in kinds.most_common() if n},
        "host_cpu_ms_per_execution": cpu_ms,
        "host_cpu_s": round(cpu, 3),
        "host_rss_mb": round(rss, 1),
    }


if __name__ == "__main__":
    main()
