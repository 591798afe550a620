"""What storage faults and crashes cost: lost, duplicated and late occurrences (issues 16 item 8 and 17).

Runs the real app under the local host (a subprocess, as `make run` does) with its storage behind the test
suite's fault-injecting TCP proxy (tests/support/fault_proxy.py), one-shot Http jobs to a local listener, in
three phases two minutes apart, with the same host:

- drop: jobs due over 40 s; for 20 s in the middle half of storage's answers are thrown away after the request
  reached Azurite (the write landed, the client sees an error);
- outage: jobs due over 40 s; storage unreachable for 15 s in the middle;
- kill: 200 jobs due over 50 s; the host is killed (SIGKILL) twice, 15 s apart, and restarted 5 s later each
  time. Reported with the time from the last restart until every occurrence due before it had run.

Prints, per phase, fired, lost, duplicated and lateness (p50, p99, worst). A figure, not a test: nothing
here asserts. Targets: nothing lost, nothing duplicated while its first runner lives, held occurrences run
within seconds of a live host.

    python bench/faults.py
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fire import GROUP, VERSION, Target, percentile, request, wait_until_up  # noqa: E402
from devhost.azurite import Azurite, free_port  # noqa: E402
from tests.support.fault_proxy import StorageFaults  # noqa: E402

COLLECTION = f"{GROUP}/faults"


class Host:
    """The local host as a child process, which the kill phase kills and restarts."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log, self.port = env, log, free_port()
        self.base = f"http://127.0.0.1:{self.port}/api"
        self.process = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        with self.log.open("ab") as log:
            return subprocess.Popen([sys.executable, "-m", "devhost", "--port", str(self.port), "--in-process"],
                                    cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def restart(self) -> None:
        self.process = self._start()
        wait_until_up(self.base, self.process)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()


def at(instant: datetime, action: Callable[[], None]) -> threading.Thread:
    def run() -> None:
        time.sleep(max(0.0, (instant - datetime.now(UTC)).total_seconds()))
        action()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def report(name: str, plan: dict[str, datetime], target: Target, extra: str = "") -> None:
    arrivals = [(job.rsplit("/", 1)[-1], when) for job, _, when in target.arrivals
                if job.rsplit("/", 1)[-1] in plan]
    counts = Counter(job for job, _ in arrivals)
    first: dict[str, datetime] = {}
    for job, when in sorted(arrivals, key=lambda a: a[1]):
        first.setdefault(job, when)
    lateness = [(when - plan[job]).total_seconds() for job, when in first.items()]
    lost = len(plan) - len(first)
    duplicated = sum(n - 1 for n in counts.values())
    hidden = sum(1 for late in lateness if late > 300)
    print(f"[{name}] fired {len(first)}/{len(plan)} ({hidden} more than 5 min late), not fired {lost}, duplicated "
          f"{duplicated}; lateness p50 "
          f"{percentile(lateness, 0.5):.2f} s, p99 {percentile(lateness, 0.99):.2f} s, worst "
          f"{max(lateness, default=0.0):.2f} s{extra}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", type=float, default=660,
                        help="seconds to wait for stragglers after the last due time (a receive whose answer was "
                             "lost hides its messages for the host's 600 s receive visibility)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Azurite(Path(tmp), in_memory=True) as azurite:
        faults = StorageFaults(azurite.connection_string)
        target = Target()
        env = {**os.environ, "AzureWebJobsStorage": faults.connection_string,
               "SCHEDULER_ALLOW_PRIVATE_TARGETS": "true", "PYTHONUNBUFFERED": "1"}
        host = Host(env, Path(tmp) / "host.log")
        try:
            wait_until_up(host.base, host.process)
            status, body = request("PUT", f"{host.base}{COLLECTION}{VERSION}", {
                "location": "West US", "properties": {"sku": {"name": "P20Premium"}}})
            assert status in (200, 201), body
            start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=60)
            drop = {f"drop{i}": start + timedelta(seconds=i * 0.5) for i in range(80)}
            outage = {f"outage{i}": start + timedelta(seconds=120 + i * 0.5) for i in range(80)}
            kill = {f"kill{i}": start + timedelta(seconds=240 + i * 0.25) for i in range(200)}
            plan = drop | outage | kill
            for name, due in plan.items():
                status, body = request("PUT", f"{host.base}{COLLECTION}/jobs/{name}{VERSION}", {"properties": {
                    "startTime": due.isoformat(), "action": {"type": "Http", "request": {
                        "uri": f"{target.url}/{name}", "method": "POST", "body": name},
                        "retryPolicy": {"retryType": "None"}}}})
                assert status in (200, 201), body
            print(f"created {len(plan)} jobs; phases at {start:%H:%M:%S}Z, +120 s, +240 s", flush=True)

            at(start + timedelta(seconds=10), lambda: faults.set_mode("drop", drop_ratio=0.5))
            at(start + timedelta(seconds=30), lambda: faults.set_mode("pass"))
            at(start + timedelta(seconds=132), lambda: faults.set_mode("down"))
            at(start + timedelta(seconds=147), lambda: faults.set_mode("pass"))
            kills = [start + timedelta(seconds=255), start + timedelta(seconds=275)]
            restarted: list[datetime] = []
            for moment in kills:
                time.sleep(max(0.0, (moment - datetime.now(UTC)).total_seconds()))
                host.kill()
                time.sleep(5)
                host.restart()
                restarted.append(datetime.now(UTC))
                print(f"killed at {moment:%H:%M:%S}Z, up again at {restarted[-1]:%H:%M:%S.%f}Z", flush=True)

            deadline = max(plan.values()) + timedelta(seconds=args.wait)
            while datetime.now(UTC) < deadline and len({a[0] for a in target.arrivals}) < len(plan):
                time.sleep(0.5)
            time.sleep(3)  # late duplicates show up
        finally:
            host.stop()
            faults.close()

    report("drop 20 s (50% of answers lost)", drop, target)
    report("outage 15 s", outage, target)
    last = restarted[-1] if restarted else kills[-1]
    held = [when for job, _, when in target.arrivals
            if job.rsplit("/", 1)[-1] in kill and kill[job.rsplit("/", 1)[-1]] < last and when >= last]
    caught_up = (max(held) - last).total_seconds() if held else 0.0
    report("kill x2, restart after 5 s", kill, target,
           f"; every occurrence due before the last restart ran within {caught_up:.2f} s of it")


if __name__ == "__main__":
    main()
