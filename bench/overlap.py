"""The overlap policies in real time (issue 27): a job that takes 90 s every 60 s, under Skip, BufferOne and Allow.

Runs the real app under the local host (`python -m devhost`, its own Azurite) with three every-minute Http jobs,
one per policy, aimed at a local asynchronous target: each POST answers `202 Accepted` with a Location (the jobs
declare request.asyncCompletion), and the work it started ends `--takes` seconds (90) after the POST, which the
polls (every `--poll` seconds, the target's Retry-After) find. So each run really takes 90 s, with no request held
open past the 60 s attempt deadline, and an occurrence runs from its first attempt to the work's end.

Prints, per policy, when each run started (its POST, in seconds after the first occurrence) and the ledger of each
occurrence (status, reason, waited). Expected with the defaults: Skip runs at 0, 120, 240 (60, 180 skipped);
BufferOne runs back to back (0, ~90, ~180, ~270: each waiter starts as the previous one's work is found done, up
to a poll later); Allow at 0, 60, 120, 180, 240.

A figure, not a test: nothing here asserts. Recorded (bench/figures.py, when BENCH_FIGURES names a file) as bench
"overlap", one phase per policy (skip, bufferone, allow): its runs' start offsets and its occurrences' ledger.

    python bench/overlap.py [--minutes 5] [--takes 90] [--poll 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import record  # noqa: E402
from devhost.azurite import Azurite  # noqa: E402
from shared.keys import JobKey  # noqa: E402
from shared.model import PREVIEW_API_VERSION  # noqa: E402
from shared.settings import Settings  # noqa: E402
from shared.store import Store  # noqa: E402
from tests.support.crash import COLLECTION, CrashingHost, crash_environment, serve_on_loopback  # noqa: E402

POLICIES = ("Skip", "BufferOne", "Allow")
V = {"api-version": PREVIEW_API_VERSION}


class AsyncTarget:
    """POST /<job> starts work that ends `takes` seconds later (202 + Location); GET /<job>/<n> says 202 until
    then, 200 after. Records each POST's arrival by job."""

    def __init__(self, takes: float, poll: int) -> None:
        self.posts: dict[str, list[datetime]] = {policy: [] for policy in POLICIES}
        lock = threading.Lock()
        posts = self.posts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                job = self.path.strip("/")
                with lock:
                    posts[job].append(datetime.now(UTC))
                    n = len(posts[job]) - 1
                self._reply(202, {"Location": f"/{job}/{n}", "Retry-After": str(poll)})

            def do_GET(self) -> None:
                job, n = self.path.strip("/").split("/")
                with lock:
                    started = posts[job][int(n)]
                done = datetime.now(UTC) >= started + timedelta(seconds=takes)
                self._reply(200 if done else 202, {} if done else {"Retry-After": str(poll)})

            def _reply(self, status: int, headers: dict[str, str]) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server, self.url = serve_on_loopback(Handler)


def create_jobs(url: str, target: AsyncTarget, start: datetime, poll: int) -> None:
    answer = requests.put(
        f"{url}/{COLLECTION}",
        params=V,
        timeout=10,
        json={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
    )
    answer.raise_for_status()
    for policy in POLICIES:
        answer = requests.put(
            f"{url}/{COLLECTION}/jobs/{policy}",
            params=V,
            timeout=10,
            json={
                "properties": {
                    "startTime": start.isoformat(),
                    "recurrence": {"frequency": "Minute", "interval": 1},
                    "overlapPolicy": policy,
                    "action": {
                        "type": "Http",
                        "request": {
                            "uri": f"{target.url}/{policy}",
                            "method": "POST",
                            "asyncCompletion": {"deadline": "PT10M", "pollingInterval": f"PT{poll}S"},
                        },
                        "retryPolicy": {"retryType": "None"},
                    },
                }
            },
        )
        answer.raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=int, default=5, help="occurrences to run (one a minute)")
    parser.add_argument("--takes", type=float, default=90.0, help="seconds each run's work takes")
    parser.add_argument("--poll", type=int, default=5, help="the target's Retry-After, seconds")
    args = parser.parse_args()
    target = AsyncTarget(args.takes, args.poll)
    figures: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder, Azurite(Path(folder) / "azurite", in_memory=True) as azurite:
        env = crash_environment(azurite, "overlap")
        host = CrashingHost(env, Path(folder) / "host.log")
        host.start()
        try:
            now = datetime.now(UTC)
            start = now.replace(second=0, microsecond=0) + timedelta(minutes=2 if now.second > 40 else 1)
            create_jobs(host.url, target, start, args.poll)
            print(f"first occurrence {start:%H:%M:%S}; {args.minutes} occurrences of a {args.takes:g} s job a minute")
            last = start + timedelta(minutes=args.minutes - 1)
            # The last occurrence, and the work of whatever started up to then, with room for the last waiter.
            end = last + timedelta(seconds=2 * args.takes + 4 * args.poll + 20)
            while datetime.now(UTC) < end:
                time.sleep(1)
            store = Store.from_settings(Settings.from_environment(env))
            for policy in POLICIES:
                runs = [int((at - start).total_seconds()) for at in target.posts[policy]]
                print(f"\n{policy}: runs started at {runs} s (the schedule goes on while the last work ends)")
                entries, _ = store.history.ledger_page(JobKey("s1", "rg", "crash", policy), None, None, None, 100)
                ledger: list[dict[str, Any]] = []
                for entry in sorted(entries, key=lambda e: e.occurrence):
                    if entry.occurrence > last:
                        continue
                    waited = f", waited {entry.waited.total_seconds():.0f} s" if entry.waited else ""
                    reason = f" ({entry.reason.value})" if entry.reason else ""
                    offset = int((entry.occurrence - start).total_seconds())
                    print(f"  occurrence +{offset:>3} s: {entry.status.value}{reason}{waited}")
                    ledger.append(
                        {
                            "offset_s": offset,
                            "status": entry.status.value,
                            "reason": entry.reason.value if entry.reason else None,
                            "waited_s": round(entry.waited.total_seconds()) if entry.waited else None,
                        }
                    )
                figures[policy.lower()] = {"executions": len(runs), "runs_started_s": runs, "occurrences": ledger}
        finally:
            host.stop()
            target.server.shutdown()
    record("overlap", figures)


if __name__ == "__main__":
    main()
