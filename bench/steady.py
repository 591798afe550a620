"""A sustained load at a fixed rate, and a collection disabled in the middle of it.

Runs the real app under the local host (as `make run` does) against its own Azurite, with every-minute jobs
spread over the seconds of the minute (job n at second n % 60), `--rate` x 60 of them in collections of
1,000, so the load is `--rate` executions per second, every second. After `--minutes` measured minutes one
collection is disabled through the API while the load runs, and the run goes on for one more minute.

Reports, per measured minute: executions that arrived at the target for the minute's occurrences, lost and
duplicated occurrences, lateness at the target (p50/p99/max); over the measured minutes: executions per
second, storage requests per execution (everything the app does, counted on the wire, by kind: tables, queues
and blobs, over exactly the measured minutes) and function invocations per execution; then how long the
disable took to answer and whether any occurrence of the disabled collection due after the answer (and its
collection read's freshness, 1 s) arrived. Duplicates are watched for 20 s after the last occurrence.

    python bench/steady.py [--rate 100] [--minutes 3] [--delay 0]

Targets (issue 22): 100 executions/s for 3 minutes with p99 <= 1 s in every minute, nothing lost or
doubled, <= 3 storage requests per execution; the disable of a 1,000-job collection answers in <= 2 s and
nothing of it fires afterwards. Figures, not tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import Harness, every_minute, kinds_line, lateness_line, next_minute, pause_until  # noqa: E402
from bench.targets import Arrival  # noqa: E402
from shared.timings import Timings  # noqa: E402

COLLECTION_SIZE = 1000
WATCH = timedelta(seconds=20)
FRESH = Timings().collection_fresh  # the executor's collection reads answer for this long (the host's defaults)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=100, help="executions per second")
    parser.add_argument("--minutes", type=int, default=3, help="measured minutes")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds the target takes to answer")
    parser.add_argument("--arrivals", help="write every arrival here (job, due, arrived; CSV) after the minutes")
    parser.add_argument("--host-log", help="copy the local host's log here at the end")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    jobs = args.rate * 60
    with tempfile.TemporaryDirectory() as tmp, Harness(Path(tmp), {"target": args.delay}) as harness:
        url = harness.targets.url("target")
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
            f"({jobs / took:.0f} PUT/s); first occurrences at {first:%H:%M}Z",
            flush=True,
        )
        if datetime.now(UTC) > first - timedelta(minutes=1, seconds=50):
            print("warning: the jobs were created late; the API, not the timer, queued the first occurrences")

        end = first + timedelta(minutes=args.minutes)
        # Costs are counted over exactly the measured minutes, [first - 1 s, end - 1 s): the minute ticks at
        # `first` .. `end` - 1 min, each dispatching the minute after it, as many as the minutes whose executions
        # are counted (the tick at `end` would add a minute of dispatch to them).
        rss = sample_until(harness, first - timedelta(seconds=1), 0.0)
        requests, invocations, kinds = harness.requests(), harness.invocations(), harness.kinds()
        rss = sample_until(harness, end - timedelta(seconds=1), rss)
        used = harness.requests() - requests
        invoked = harness.invocations() - invocations
        by_kind = harness.kinds() - kinds
        rss = sample_until(harness, end + timedelta(seconds=5), rss)
        report(harness.targets.arrivals(), home, first, args.minutes, used, invoked, by_kind, rss)
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
            return
        after = end + timedelta(minutes=1)
        pause_until(after + WATCH)
        arrivals = harness.targets.arrivals()
        report(arrivals, home, first, args.minutes, used, invoked, by_kind, rss, quiet=True)
        if args.host_log:
            shutil.copy(harness.log_path, args.host_log)

    late_ones = [a for a in arrivals if home.get(a.job) == victim and a.at > answered]
    due_after = [a for a in late_ones if a.expected > answered + FRESH]
    print(
        f"[disable] POST disable of {victim} ({list(home.values()).count(victim)} jobs) under the load: {status} "
        f"in {seconds:.2f} s; "
        f"arrivals of it after the answer: {len(late_ones)} (due up to "
        f"{max((a.expected for a in late_ones), default=answered):%H:%M:%S}Z, answer at {answered:%H:%M:%S.%f}Z), "
        f"of which due more than {FRESH.total_seconds():g} s after the answer: {len(due_after)}"
    )
    others = [a for a in arrivals if home.get(a.job) != victim and end <= a.expected < after]
    print(
        f"[disable] the other collections in the minute after: {len(others)} executions, lateness "
        f"{lateness_line([(a.at - a.expected).total_seconds() for a in others])}"
    )


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
    quiet: bool = False,
) -> None:
    """Per measured minute; `quiet`: only duplicates that showed up since (the watch after the last minute)."""
    jobs = len(home)
    total = 0
    for minute in range(minutes):
        start = first + timedelta(minutes=minute)
        these = [a for a in arrivals if a.job in home and start <= a.expected < start + timedelta(minutes=1)]
        seen = Counter((a.job, a.expected) for a in these)
        lateness = [(a.at - a.expected).total_seconds() for a in these]
        total += len(these)
        if quiet:
            doubled = sum(n - 1 for n in seen.values())
            if doubled:
                print(f"[steady] minute {minute + 1}: {doubled} duplicated, seen by the end of the watch")
            continue
        print(
            f"[steady] minute {minute + 1} ({start:%H:%M}Z): {len(seen)}/{jobs} occurrences arrived, "
            f"{jobs - len(seen)} lost, {sum(n - 1 for n in seen.values())} duplicated, "
            f"{sum(1 for x in lateness if x < 0)} early; lateness {lateness_line(lateness)}"
        )
    if quiet:
        return
    # Where in the minute lateness comes from (the minute's dispatch of the next one runs at its start).
    measured = [a for a in arrivals if a.job in home and first <= a.expected < first + timedelta(minutes=minutes)]
    slices = []
    for low in range(0, 60, 10):
        late = sorted((a.at - a.expected).total_seconds() for a in measured if low <= a.expected.second < low + 10)
        slices.append(f"{low:02}-{low + 9:02} s {late[int(0.99 * (len(late) - 1))]:.2f}" if late else f"{low:02} s -")
    print(f"[steady] lateness p99 by second of the minute: {', '.join(slices)}")
    seconds = minutes * 60
    print(
        f"[steady] {total} executions in {seconds} s: {total / seconds:.1f} executions/s; "
        f"{used / max(total, 1):.2f} storage requests and {invoked / max(total, 1):.3f} function invocations "
        f"per execution ({used} requests, {invoked} invocations); host RSS peak {rss:.0f} MB"
    )
    print(f"[steady] requests per execution by kind: {kinds_line(kinds, total)}")


if __name__ == "__main__":
    main()
