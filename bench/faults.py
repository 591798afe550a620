"""What storage faults and crashes cost: lost, duplicated and late occurrences (issues 16 item 8, 17 and 23).

Runs the real app under the local host (a subprocess in a process group of its own, as `make run` does) with its
storage behind the test suite's fault-injecting TCP proxy (tests/support/fault_proxy.py), Http jobs to a local
listener, phase after phase with the same host:

- drop: 80 one-shot jobs due over 40 s; for 20 s in the middle half of storage's answers are thrown away after the
  request reached Azurite (the write landed, the client sees an error);
- outage: 80 jobs due over 40 s; storage unreachable for 15 s in the middle;
- outage then resets: 80 jobs due over 40 s; storage unreachable for 16 s, then for 20 s 40 % of new connections
  to it are reset (issue 37's slow-and-lossy scenario); through all three storage phases the API is probed (a
  PUT, a GET and a list a few times a second, bench/api_probe.py): 200/201 or 503 with Retry-After, never 500;
- double-lost receive: 20 jobs due at one second; every queue answer is thrown away from 6 s before that second to
  8 s after it, so the receive of each batch and the receive of its watchdog are both lost (each message hidden
  for the host's ten-minute receive visibility while no worker knows of it);
- kill at random (--runs times): 150 one-shot jobs due two a second over 75 s, 4 every-minute jobs, and one slow
  job (its target answers after 5 s) due a second before each kill; the host's whole process group is SIGKILLed
  three times and started again at once: 0.4 s into a minute tick (inside its dispatch tasks), 1 s before the
  next tick, and at a random moment of the window.

Per phase: fired, lost (not arrived by the end), duplicated, split into those in flight at a crash (fired, not
answered 1 s before it) and the rest (answered at least 1 s before a crash, or no crash to explain them); the
lateness (p50, p99, worst) of the occurrences no crash held, and of those a crash held (due before the host was
back, or received early by the dead host, and not fired before the kill) the worst lateness counted from when
the host was back, or from their second when that came later.

A figure, not a test: nothing here asserts. Targets (issue 23): nothing lost, no duplicate of an occurrence that
had answered at least 1 s before a crash, held occurrences within 15 s of the host being back, everything else
p99 <= 1 s; a double-lost receive within 60 s of its second.

    python bench/faults.py [--runs 5]
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.api_probe import ApiProbe  # noqa: E402
from bench.faults_report import Crash, Phase, Target, report  # noqa: E402
from bench.figures import record  # noqa: E402
from bench.harness import GROUP, VERSION, request  # noqa: E402
from devhost.azurite import Azurite  # noqa: E402
from tests.support.crash import CrashingHost  # noqa: E402
from tests.support.fault_proxy import StorageFaults  # noqa: E402


def sleep_until(instant: datetime) -> None:
    time.sleep(max(0.0, (instant - datetime.now(UTC)).total_seconds()))


def at(instant: datetime, action: Callable[[], None]) -> None:
    def run() -> None:
        sleep_until(instant)
        action()

    threading.Thread(target=run, daemon=True).start()


def create(
    host: CrashingHost,
    target: Target,
    phase: Phase,
    jobs: dict[str, tuple[datetime, bool]],
    until: datetime | None = None,
) -> None:
    """The phase's collection and its jobs (name -> (start, every minute, ending at `until`)), side by side."""
    status, body = request(
        "PUT",
        f"{host.url}{GROUP}/{phase.collection}{VERSION}",
        {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
    )
    assert status in (200, 201), body

    def put(name: str) -> None:
        start, minutely = jobs[name]
        properties: dict[str, object] = {
            "startTime": start.isoformat(),
            "action": {
                "type": "Http",
                "request": {"uri": f"{target.url}/{name}", "method": "POST", "body": name},
                "retryPolicy": {"retryType": "None"},
            },
        }
        if minutely:
            properties["recurrence"] = {
                "frequency": "Minute",
                "interval": 1,
                **({"endTime": until.isoformat()} if until else {}),
            }
        status, body = request(
            "PUT", f"{host.url}{GROUP}/{phase.collection}/jobs/{name}{VERSION}", {"properties": properties}
        )
        assert status in (200, 201), body

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, jobs))


def next_minute(after: datetime, second: int) -> datetime:
    """The first hh:mm:second at least `after`."""
    candidate = after.replace(second=second, microsecond=0)
    return candidate if candidate >= after else candidate + timedelta(minutes=1)


def kill_run(index: int, host: CrashingHost, target: Target, rng: random.Random) -> Phase:
    phase = Phase(f"kill at random, run {index}", f"kill{index}", f"kill-run-{index}")
    # The window opens at hh:mm:50 at least 40 s from now (room to create the jobs), lasts 75 s, and holds the
    # ticks of the next two minutes: its first tick dispatches the window's last seconds.
    start = next_minute(datetime.now(UTC) + timedelta(seconds=40), 50)
    end = start + timedelta(seconds=75)
    tick = start + timedelta(seconds=10)  # the minute tick inside the window
    kills = [tick + timedelta(seconds=0.4), tick + timedelta(seconds=59)]
    while True:
        moment = start + timedelta(seconds=rng.uniform(2, 73))
        if all(abs((moment - k).total_seconds()) >= 8 for k in kills):
            break
    kills = sorted([*kills, moment])
    # Names unique to the run: the target tells calls apart by job name and expected time.
    jobs = {f"r{index}once{i:03d}": (start + timedelta(seconds=i * 0.5), False) for i in range(150)}
    jobs |= {f"r{index}minutely{k}": (start + timedelta(seconds=2 + 17 * k), True) for k in range(4)}
    jobs |= {
        f"slow{index}{k}": ((kill - timedelta(seconds=1)).replace(microsecond=0), False) for k, kill in enumerate(kills)
    }
    create(host, target, phase, jobs, until=end + timedelta(seconds=60))
    for name, (first, minutely) in jobs.items():
        due = first
        while due <= end:
            phase.plan.add((name, due))
            if not minutely:
                break
            due += timedelta(minutes=1)
    print(
        f"[{phase.name}] window {start:%H:%M:%S}-{end:%H:%M:%S}Z, kills at "
        + ", ".join(f"{k:%H:%M:%S.%f}"[:-5] for k in kills),
        flush=True,
    )
    for kill in kills:
        sleep_until(kill)
        host.kill()
        died = datetime.now(UTC)
        host.start()
        phase.crashes.append(Crash(died, datetime.now(UTC)))
    sleep_until(end + timedelta(seconds=30))
    return phase


def double_lost_receive(host: CrashingHost, target: Target, faults: StorageFaults) -> Phase:
    phase = Phase("double-lost receive (batch and watchdog)", "twice", "double-lost-receive")
    second = next_minute(datetime.now(UTC) + timedelta(minutes=2, seconds=20), 30)  # queued by a tick, batched
    jobs = {f"twice{i:02d}": (second, False) for i in range(20)}
    create(host, target, phase, jobs)
    phase.plan = {(name, due) for name, (due, _) in jobs.items()}
    queue = faults.proxies["QueueEndpoint"]
    queue.drop_ratio = 1.0
    at(second - timedelta(seconds=6), lambda: queue.set_mode("drop"))
    at(second + timedelta(seconds=8), lambda: queue.set_mode("pass"))
    sleep_until(second + timedelta(seconds=75))
    return phase


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="kill-at-random runs")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument(
        "--phases", nargs="+", choices=("storage", "double", "kills"), default=["storage", "double", "kills"]
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    phases: list[Phase] = []
    figures: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp, Azurite(Path(tmp), in_memory=True) as azurite:
        faults = StorageFaults(azurite.connection_string)
        target = Target()
        env = {
            **os.environ,
            "AzureWebJobsStorage": faults.connection_string,
            "SCHEDULER_PRIVATE_TARGETS": "loopback",
            "PYTHONUNBUFFERED": "1",
        }
        host = CrashingHost(env, Path(tmp) / "host.log")
        host.start()
        try:
            start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=60)
            # (name, its key in the figures, offset from start, [(second of the phase, proxy mode, share of answers
            # or connections)]).
            storage_phases = (
                (
                    ("drop 20 s (50% of answers lost)", "drop", 0, [(10, "drop", 0.5), (30, "pass", 0.5)]),
                    ("outage 15 s", "outage", 120, [(12, "down", 0.5), (27, "pass", 0.5)]),
                    (
                        "outage 16 s, then 20 s of resets (40% of connections)",
                        "outage-then-resets",
                        240,
                        [(10, "down", 0.4), (26, "reset", 0.4), (46, "pass", 0.4)],
                    ),
                )
                if "storage" in args.phases
                else ()
            )
            probe = ApiProbe(host.url, "probe").start() if storage_phases else None
            for name, key, offset, steps in storage_phases:
                phase = Phase(name, name.split()[0] + str(offset), key)
                jobs = {
                    f"{phase.collection}{i}": (start + timedelta(seconds=offset + i * 0.5), False) for i in range(80)
                }
                create(host, target, phase, jobs)
                phase.plan = {(job, due) for job, (due, _) in jobs.items()}
                for second, mode, share in steps:
                    at(
                        start + timedelta(seconds=offset + second),
                        functools.partial(faults.set_mode, mode, drop_ratio=share),
                    )
                phases.append(phase)
            if storage_phases:
                sleep_until(start + timedelta(seconds=320))
                assert probe is not None
                print(probe.stop(), flush=True)
                figures["storage-api-probe"] = {
                    "statuses": dict(probe.statuses),
                    "unexpected": len(probe.unexpected),
                    "first_unexpected": probe.unexpected[:3],
                }
            if "double" in args.phases:
                phases.append(double_lost_receive(host, target, faults))
            for run in range(1, args.runs + 1 if "kills" in args.phases else 1):
                phases.append(kill_run(run, host, target, rng))
            # A receive whose answer was lost in the drop phase, and whose watchdog's and backstop's were lost
            # too, hides its batch for the host's ten minutes: by now that has passed.
            time.sleep(3)
        finally:
            host.stop()
            faults.close()
    for phase in phases:
        figures[phase.key] = report(phase, target)
    record("faults", figures)


if __name__ == "__main__":
    main()
