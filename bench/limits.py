"""The cross-instance limits of issue 27, end to end under the local host (`python -m devhost`), one Azurite:

(a) rate: N one-shot jobs due the same second, aimed at one target host that their collection limits to R
    requests per second (`targetRateLimits`): the most requests the target saw in any one second (sliding
    windows starting at each request; also by calendar second), lost, doubled, how long the herd took from its
    second to the last request (N/R expected), and whether the requests came in due order;
(b) concurrency: M one-shot jobs due the same second in a collection with `maxConcurrentExecutions` K, served
    by three local hosts, aimed at a target that holds each request HOLD seconds: the most requests the
    target held at once.

Each also prints the local hosts' CPU per execution (from one second before the tick that dispatches the herd to
the end of its duplicate watch; in (b) the three hosts together), and the figures are recorded (bench/figures.py,
when BENCH_FIGURES names a file) as bench "limits", phases "rate" and "concurrency".

    .venv/bin/python bench/limits.py            # the issue's figures: 1,000 at 50/s; 100 jobs, limit 10
    .venv/bin/python bench/limits.py --short    # scaled down, to check it runs: 200 at 20/s; 30 jobs, limit 5
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import cpu_seconds, record  # noqa: E402
from bench.harness import GROUP, Harness, next_minute, one_shot, pause_until, request  # noqa: E402
from bench.phase_figures import cpu_ms, cpu_text, num  # noqa: E402
from bench.targets import Arrival  # noqa: E402
from devhost.azurite import free_port  # noqa: E402

NEWER = "?api-version=2026-12-01-preview"
HOLD = 1.0  # seconds the concurrency target holds each request
WATCH = 10.0  # seconds duplicates are watched for after the last arrival


def limited_collection(harness: Harness, name: str, properties: dict[str, object]) -> None:
    body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}, **properties}}
    status, text = request("PUT", f"{harness.base}{GROUP}/{name}{NEWER}", body)
    assert status in (200, 201), text


def herd(harness: Harness, collection: str, target: str, count: int) -> tuple[datetime, set[str]]:
    """`count` one-shot jobs due at one second; that second and the job ids (as the target sees them). Created far
    enough ahead (at a conservative 40 PUT/s) that the minute timer queues them, in batches, as it queues a
    schedule's herd: jobs created within their due minute are queued by the API one message each, and then the
    executor's messages a second, not the limit, set the pace."""
    due = next_minute(datetime.now(UTC), timedelta(minutes=2, seconds=30 + count / 40))
    names = [f"j{n:04d}" for n in range(count)]
    harness.create_jobs((collection, name, one_shot(due, harness.targets.url(target))) for name in names)
    return due, set(names)  # the target sees a job's name (x-ms-scheduler-jobid)


def arrivals_of(
    harness: Harness, ids: set[str], count: int, due: datetime, until: datetime, pids: list[int]
) -> tuple[list[Arrival], float]:
    """The herd's arrivals, and the CPU seconds the hosts (`pids`) spent from one second before the tick that
    dispatches it to the end of the duplicate watch."""

    def ours() -> list[Arrival]:
        return [a for a in harness.targets.arrivals() if a.job in ids]

    pause_until(due.replace(second=0) - timedelta(minutes=1, seconds=1))
    cpu = sum(cpu_seconds(pid) for pid in pids)
    while datetime.now(UTC) < until and len({a.job for a in ours()}) < count:
        time.sleep(0.2)
    time.sleep(WATCH)
    return ours(), sum(cpu_seconds(pid) for pid in pids) - cpu


def most_in_one_second(instants: list[float]) -> int:
    ordered = sorted(instants)
    most, first = 0, 0
    for last, instant in enumerate(ordered):
        while instant - ordered[first] >= 1.0:
            first += 1
        most = max(most, last - first + 1)
    return most


def most_at_once(arrivals: list[Arrival], hold: float) -> int:
    events = sorted([(a.at.timestamp(), 1) for a in arrivals] + [(a.at.timestamp() + hold, -1) for a in arrivals])
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def rate_phase(folder: Path, count: int, rate: float) -> dict[str, Any]:
    with Harness(folder / "rate", {"paced": 0.0}) as harness:
        limited_collection(harness, "rate", {"targetRateLimits": [{"host": "127.0.0.1", "requestsPerSecond": rate}]})
        due, ids = herd(harness, "rate", "paced", count)
        print(f"[rate] {count} jobs due at {due:%H:%M:%S}, aimed at one host limited to {rate:g} requests/s")
        until = due + timedelta(seconds=count / rate + 120)
        arrivals, cpu = arrivals_of(harness, ids, count, due, until, [harness.host.pid])
    jobs = Counter(a.job for a in arrivals)
    instants = [a.at.timestamp() for a in arrivals]
    by_second = Counter(int(t) for t in instants)
    ordered = sorted(arrivals, key=lambda a: a.at)
    in_order = all(a.expected <= b.expected for a, b in zip(ordered, ordered[1:], strict=False))
    took = (max(a.at for a in arrivals) - due).total_seconds() if arrivals else float("nan")
    first = (min(a.at for a in arrivals) - due).total_seconds() if arrivals else float("nan")
    most, doubled = most_in_one_second(instants), sum(n - 1 for n in jobs.values())
    print(
        f"[rate] observed max per second: {most} (sliding 1 s windows), "
        f"{max(by_second.values(), default=0)} (calendar seconds); limit {rate:g}"
    )
    seconds = range(min(by_second, default=0), max(by_second, default=-1) + 1)
    print(f"[rate] per calendar second: {' '.join(str(by_second.get(s, 0)) for s in seconds)}")
    print(
        f"[rate] fired {len(jobs)}/{count}, lost {count - len(jobs)}, doubled {doubled}, "
        f"total duration {took:.1f} s from the due second to the last request (the first at {first:.2f} s; "
        f"expected ~{count / rate:.0f} s), "
        f"in due order: {'yes' if in_order else 'no'}; {cpu_text(cpu, len(arrivals))}"
    )
    return {
        "jobs": count,
        "limit_per_s": rate,
        "executions": len(arrivals),
        "lost": count - len(jobs),
        "duplicated": doubled,
        "most_per_second": most,
        "most_per_calendar_second": max(by_second.values(), default=0),
        "per_calendar_second": [by_second.get(s, 0) for s in seconds],
        "duration_s": num(took, 1),
        "first_request_s": num(first, 2),
        "expected_duration_s": num(count / rate, 1),
        "in_due_order": in_order,
        "host_cpu_s": num(cpu, 2),
        "host_cpu_ms_per_execution": cpu_ms(cpu, len(arrivals)),
    }


def concurrency_phase(folder: Path, count: int, limit: int) -> dict[str, Any]:
    with Harness(folder / "concurrency", {"slow": HOLD}) as harness, ExitStack() as stack:
        env = {
            **os.environ,
            "AzureWebJobsStorage": harness.meter.connection_string,
            "SCHEDULER_PRIVATE_TARGETS": "loopback",
            "PYTHONUNBUFFERED": "1",
        }
        pids = [harness.host.pid]
        for n in (2, 3):  # two more instances on the same storage
            log = stack.enter_context((folder / f"host{n}.log").open("wb"))
            port = free_port()
            host = subprocess.Popen(
                [sys.executable, "-m", "devhost", "--port", str(port), "--in-process"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            stack.callback(_stop, host)
            pids.append(host.pid)
            _wait_up(f"http://127.0.0.1:{port}/api")
        limited_collection(harness, "conc", {"maxConcurrentExecutions": limit})
        due, ids = herd(harness, "conc", "slow", count)
        print(f"[concurrency] {count} jobs due at {due:%H:%M:%S}, maxConcurrentExecutions {limit}, three local hosts")
        until = due + timedelta(seconds=count * HOLD / limit * 3 + 120)
        arrivals, cpu = arrivals_of(harness, ids, count, due, until, pids)
    jobs = Counter(a.job for a in arrivals)
    took = (max(a.at for a in arrivals) - due).total_seconds() + HOLD if arrivals else float("nan")
    most, doubled = most_at_once(arrivals, HOLD), sum(n - 1 for n in jobs.values())
    print(
        f"[concurrency] max in flight at the target: {most} (limit {limit}); fired "
        f"{len(jobs)}/{count}, lost {count - len(jobs)}, doubled {doubled}; "
        f"done {took:.1f} s after the due second (at the limit: {count * HOLD / limit:.0f} s); "
        f"{cpu_text(cpu, len(arrivals))}, the three hosts together"
    )
    return {
        "jobs": count,
        "limit": limit,
        "hosts": len(pids),
        "executions": len(arrivals),
        "lost": count - len(jobs),
        "duplicated": doubled,
        "most_in_flight": most,
        "duration_s": num(took, 1),
        "duration_at_limit_s": num(count * HOLD / limit, 1),
        "host_cpu_s": num(cpu, 2),
        "host_cpu_ms_per_execution": cpu_ms(cpu, len(arrivals)),
    }


def _stop(host: subprocess.Popen[bytes]) -> None:
    host.terminate()
    try:
        host.wait(timeout=20)
    except subprocess.TimeoutExpired:
        host.kill()
        host.wait()


def _wait_up(base: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if request("GET", f"{base}{GROUP}/probe?api-version=2016-03-01", timeout=5)[0] in (200, 404):
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"a local host at {base} did not come up")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help="scaled down (a check that it runs)")
    parser.add_argument("--phase", choices=("rate", "concurrency", "both"), default="both")
    args = parser.parse_args()
    figures: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-limits-") as folder:
        if args.phase in ("rate", "both"):
            figures["rate"] = rate_phase(Path(folder), 200 if args.short else 1000, 20.0 if args.short else 50.0)
        if args.phase in ("concurrency", "both"):
            figures["concurrency"] = concurrency_phase(Path(folder), 30 if args.short else 100, 5 if args.short else 10)
    record("limits", figures)


if __name__ == "__main__":
    main()
