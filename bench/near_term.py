"""Jobs created inside the dispatch horizon: what a bulk creation of near-term jobs costs, PUT and execution together.

Runs the real app under the local host (as `make run` does) against its own Azurite. Creates `--jobs` one-shot jobs
(collections of 1,000) through the API with 8 client threads as fast as it answers, each due `--lead` seconds after
its own PUT is sent (whole seconds): before the dispatch horizon, so the API, not the minute timer, hands each first
occurrence to the queue (shared/first_dispatch.py), and later than `first_inline_within`, so it does so through a
dispatch task of the occurrence's partition. Then waits for every execution and a duplicate watch.

Reports: fired, duplicated, lost, early; lateness at the target (p50/p99/max); the PUTs' answer times (p50/p99) and
rate; storage requests, function invocations and the local host's CPU per job, counted from the first PUT to the end
of the watch, so each job's PUT is in its cost; and the executions a second over raw storage's operations a second
(a single-entity read, measured in the same run).

    python bench/near_term.py [--jobs 3000] [--lead 30]
"""

from __future__ import annotations

import argparse
import math
import shutil
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
from bench.harness import (  # noqa: E402
    GROUP,
    VERSION,
    Harness,
    kinds_line,
    lateness_figures,
    lateness_line,
    one_shot,
    pause_until,
    per_execution,
    request,
)
from bench.idle import raw_round_trip  # noqa: E402
from bench.phase_figures import raw_read  # noqa: E402

COLLECTION_SIZE = 1000
WATCH = timedelta(seconds=20)  # duplicates watched for after the last arrival: past a redelivery or a watchdog
WAIT = timedelta(seconds=120)  # the longest an execution is waited for past the last job's second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=3000, help="one-shot jobs created")
    parser.add_argument("--lead", type=float, default=30.0, help="seconds from a job's PUT to its second")
    parser.add_argument("--host-log", help="copy the local host's log here at the end")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Harness(Path(tmp), {"target": 0.0}) as harness:
        raw = raw_round_trip(harness)  # straight to Azurite, before the load
        url = harness.targets.url("target")
        collections = [f"n{n}" for n in range(math.ceil(args.jobs / COLLECTION_SIZE))]
        for name in collections:
            harness.collection(name)
        plan: dict[str, datetime] = {}
        refused: dict[str, str] = {}  # job -> the PUT's status and answer, when it was not created
        answers: list[float] = []

        def put(n: int) -> int:
            name = f"j{n}"
            due = datetime.now(UTC) + timedelta(seconds=args.lead)
            due = due.replace(microsecond=0) + timedelta(seconds=1)  # whole seconds, at least `lead` ahead
            plan[name] = due
            path = f"{harness.base}{GROUP}/{collections[n // COLLECTION_SIZE]}/jobs/{name}{VERSION}"
            began = time.perf_counter()
            status, body = request("PUT", path, {"properties": one_shot(due, url)})
            answers.append(time.perf_counter() - began)
            if status != 201:
                refused[name] = f"{status} {body[:300].decode(errors='replace')}"
                del plan[name]
            return status

        requests, invocations, kinds = harness.requests(), harness.invocations(), harness.kinds()
        cpu, began = harness.host_cpu_seconds(), time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(put, range(args.jobs)))
        took = time.monotonic() - began
        for name, answer in sorted(refused.items())[:5]:
            print(f"[near-term] PUT {name} refused: {answer}")
        if len(refused) > args.jobs // 100:
            raise SystemExit(f"{len(refused)} of {args.jobs} job PUTs failed: {sorted(set(statuses))}")
        deadline = max(plan.values()) + WAIT
        while datetime.now(UTC) < deadline and len({a.job for a in harness.targets.arrivals()}) < len(plan):
            time.sleep(0.5)
        arrivals = [a for a in harness.targets.arrivals() if a.job in plan]
        pause_until(max((a.at for a in arrivals), default=datetime.now(UTC)) + WATCH)
        used, invoked = harness.requests() - requests, harness.invocations() - invocations
        by_kind, cpu = harness.kinds() - kinds, harness.host_cpu_seconds() - cpu
        arrivals = [a for a in harness.targets.arrivals() if a.job in plan]
        left = due_entries_left(harness)
        if args.host_log:
            shutil.copy(harness.log_path, args.host_log)
    fired = {a.job for a in arrivals}
    missing = sorted((due, name) for name, due in plan.items() if name not in fired)
    if missing:
        print(
            f"[near-term] not arrived: {len(missing)}, due {missing[0][0]:%H:%M:%S} to {missing[-1][0]:%H:%M:%S}Z; "
            f"e.g. {', '.join(name for _, name in missing[:5])}"
        )
    print(f"[near-term] rows left in the due index at the end: {left}")
    figures = report(args, plan, arrivals, answers, took, used, invoked, by_kind, cpu, raw)
    record("near_term", {"near-term": {**figures, "puts_refused": len(refused), "due_rows_left": left}}, raw_read(raw))


def due_entries_left(harness: Harness) -> int:
    """Rows left in the due index (none once every occurrence was dispatched)."""
    from azure.data.tables import TableServiceClient

    service = TableServiceClient.from_connection_string(harness.azurite.connection_string)
    return sum(1 for _ in service.get_table_client("schedulerDue").list_entities(select=["RowKey"]))


def report(
    args: argparse.Namespace,
    plan: dict[str, datetime],
    arrivals: list[Any],
    answers: list[float],
    took: float,
    used: int,
    invoked: int,
    by_kind: Any,
    cpu: float,
    raw: float,
) -> dict[str, Any]:
    """Print the figures; the same figures for bench/figures.py."""
    fired = {a.job for a in arrivals}
    lateness = [(a.at - a.expected).total_seconds() for a in arrivals]
    early = sum(1 for x in lateness if x < 0)
    print(
        f"[near-term] created {len(plan)} of {args.jobs} one-shot jobs, each due {args.lead:g} s after its PUT, in "
        f"{took:.1f} s "
        f"({args.jobs / took:.0f} PUT/s); PUT answered {lateness_line(answers)}"
    )
    print(
        f"[near-term] fired {len(fired)}/{len(plan)}, {len(arrivals) - len(fired)} duplicate(s), "
        f"{len(plan) - len(fired)} lost, {early} early; lateness {lateness_line(lateness)}"
    )
    executions = len(arrivals)
    cpu_ms = per_execution(cpu * 1000, executions, 3)
    print(
        f"[near-term] per job (its PUT and its execution): {used / max(executions, 1):.2f} storage requests, "
        f"{invoked / max(executions, 1):.3f} function invocations, host CPU "
        f"{'-' if cpu_ms is None else f'{cpu_ms:.2f}'} ms ({cpu:.1f} s)"
    )
    print(f"[near-term] requests:  {kinds_line(by_kind, executions)}")
    first = min(plan.values())
    span = max(((a.at - first).total_seconds() for a in arrivals), default=0.0)
    rate = executions / span if span > 0 else None
    if rate is not None:
        print(
            f"[near-term] vs raw:    {rate:.1f} executions/s from the first due second to the last arrival; raw "
            f"storage {1 / raw:.0f} operations/s (a single-entity read {raw * 1000:.2f} ms): {rate * raw:.3f}"
        )
    return {
        "jobs": len(plan),
        "lead_s": args.lead,
        "puts_per_s": round(args.jobs / took, 1),
        "put_answer_s": lateness_figures(answers),
        "fired": len(fired),
        "duplicated": len(arrivals) - len(fired),
        "lost": len(plan) - len(fired),
        "early": early,
        "lateness_s": lateness_figures(lateness),
        "storage_requests_per_execution": per_execution(used, executions),
        "invocations_per_execution": per_execution(invoked, executions),
        "host_cpu_ms_per_execution": cpu_ms,
        "storage_requests_by_kind": {kind: per_execution(n, executions) for kind, n in by_kind.most_common() if n},
        "executions_per_s": round(rate, 1) if rate is not None else None,
        "vs_raw": round(rate * raw, 4) if rate is not None else None,
    }


if __name__ == "__main__":
    main()
