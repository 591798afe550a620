"""Memory of actions in flight: 5,000 attempts waiting for their target at once, in one process.

The whole executor path in one process (as a Functions worker runs it): 5,000 jobs created through the API
in-process against an Azurite of its own, then 50 batches of 100 run-now occurrences handed to the executor
side by side on one event loop (as the queue trigger would hand them over), every action aimed at a local
target (another process, bench/targets.py) that holds each request past the 60 s deadline. The process's RSS
is sampled until all 5,000 requests are held at the target, and once more after they timed out and were
recorded. SCHEDULER_ACTIONS_IN_FLIGHT and SCHEDULER_ACTIONS_PER_HOST are raised to 5,000 for the run.

    python bench/memory.py [--actions 5000]

Target (issue 22): 5,000 actions in flight under 500 MB RSS. A figure, not a test. Recorded (bench/figures.py,
when BENCH_FIGURES names a file) as bench "memory", phase `actions-<count>`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import record  # noqa: E402
from bench.harness import rss_mb  # noqa: E402
from bench.targets import Targets  # noqa: E402
from devhost.azurite import Azurite  # noqa: E402
from shared.keys import JobKey  # noqa: E402
from shared.occurrence import OccurrenceMessage, Trigger, batches  # noqa: E402
from shared.runtime import Runtime  # noqa: E402
from shared.settings import Settings  # noqa: E402
from tests.support.scheduler_client import api_call, encoded  # noqa: E402

SUB, RG = "bench", "rg"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=5000)
    args = parser.parse_args()
    count = args.actions
    with tempfile.TemporaryDirectory() as tmp, Azurite(Path(tmp) / "azurite", in_memory=True) as azurite:
        targets = Targets({"hang": None}, Path(tmp)).start()
        try:
            settings = Settings.from_environment(
                {
                    "AzureWebJobsStorage": azurite.connection_string,
                    "SCHEDULER_PRIVATE_TARGETS": "loopback",
                    "SCHEDULER_AUTH": "none",
                    "SCHEDULER_ACTIONS_IN_FLIGHT": str(count),
                    "SCHEDULER_ACTIONS_PER_HOST": str(count),
                }
            )
            rt = Runtime.create(settings)
            keys = create_jobs(rt, count, targets.url("hang"))
            figures = run(rt, keys, targets, count)
        finally:
            targets.stop()
    record("memory", {f"actions-{count}": figures})


def create_jobs(rt: Runtime, count: int, url: str) -> list[JobKey]:
    start = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()
    job = {
        "properties": {
            "startTime": start,
            "action": {
                "type": "Http",
                "request": {"uri": url, "method": "POST", "body": "fire"},
                "retryPolicy": {"retryType": "None"},
            },
        }
    }
    names = [(f"c{n // 1000}", f"j{n}") for n in range(count)]
    for collection in sorted({c for c, _ in names}):
        answer = api_call(
            rt,
            "JobCollections_CreateOrUpdate",
            "PUT",
            subscription=SUB,
            group=RG,
            collection=collection,
            data=encoded({"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}),
        )
        assert answer.status == 201, answer.body

    def put(name: tuple[str, str]) -> JobKey:
        answer = api_call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            subscription=SUB,
            group=RG,
            collection=name[0],
            job=name[1],
            data=encoded(job),
        )
        assert answer.status == 201, answer.body
        return JobKey(SUB, RG, *name)

    started = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        keys = list(pool.map(put, names))
    print(f"created {count} jobs in {time.perf_counter() - started:.1f} s", flush=True)
    return keys


def run(rt: Runtime, keys: list[JobKey], targets: Targets, count: int) -> dict[str, Any]:
    """Print what the process's memory did; the same figures for bench/figures.py."""
    pid = os.getpid()
    due = (datetime.now(UTC) + timedelta(seconds=5)).replace(microsecond=0)
    messages = []
    for key in keys:
        job = rt.store.jobs.get(key)
        assert job is not None
        messages.append(OccurrenceMessage(key, due, due, Trigger.RUN_NOW, generation=job.generation))
    texts = [batch.to_json() for batch in batches(messages)]
    baseline = rss_mb(pid)
    print(
        f"RSS before the batches: {baseline:.0f} MB ({len(texts)} batches of up to 100 run-now occurrences, "
        f"due {due:%H:%M:%S}Z)",
        flush=True,
    )
    figures: dict[str, Any] = {"actions": count, "batches": len(texts), "rss_mb_before": round(baseline, 1)}

    async def watch(done: asyncio.Event) -> tuple[float, float, int]:
        peak, at_full, held = 0.0, 0.0, 0
        while not done.is_set():
            await asyncio.sleep(0.5)
            rss = rss_mb(pid)
            peak = max(peak, rss)
            held = len(targets.arrivals())
            if held >= count and not at_full:
                at_full = rss
                running, after, count_threads = (
                    rt.executor.attempts.actions.limits.running(),
                    (datetime.now(UTC) - due).total_seconds(),
                    threads(),
                )
                print(
                    f"all {held} requests held at the target {after:.1f} s "
                    f"after their second: RSS {rss:.0f} MB, {running} actions in flight in this process, "
                    f"{count_threads} threads",
                    flush=True,
                )
                figures.update(all_held_after_s=round(after, 1), actions_in_flight=running, threads=count_threads)
        return peak, at_full, held

    async def everything() -> None:
        done = asyncio.Event()
        watcher = asyncio.ensure_future(watch(done))
        results = await asyncio.gather(*(rt.executor.handle_async(text) for text in texts), return_exceptions=True)
        done.set()
        peak, at_full, held = await watcher
        failed = [r for r in results if isinstance(r, BaseException)]
        after = rss_mb(pid)
        print(
            f"[memory] {count} actions in flight: RSS {at_full:.0f} MB when all were held "
            f"({(at_full - baseline) * 1024 / count:.0f} KB per action over the {baseline:.0f} MB before), "
            f"peak {peak:.0f} MB; {held} requests reached the target; {len(failed)} batch(es) failed; "
            f"RSS after they timed out and were recorded: {after:.0f} MB",
            flush=True,
        )
        figures.update(
            rss_mb_all_held=round(at_full, 1),
            kb_per_action=round((at_full - baseline) * 1024 / count, 1),
            rss_mb_peak=round(peak, 1),
            requests_held=held,
            batches_failed=len(failed),
            rss_mb_after=round(after, 1),
        )

    asyncio.run(everything())
    return figures


def threads() -> int:
    return len(os.listdir(f"/proc/{os.getpid()}/task"))


if __name__ == "__main__":
    main()
