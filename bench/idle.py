"""The fixed cost: what the app spends in storage requests and function invocations while nothing is due.

Runs the real app under the local host (as `make run` does) against its own Azurite, with one collection and
jobs that are not due within the run, and counts on the wire everything it does for `--minutes` whole
minutes: the host's queue polling (it backs off to `maxPollingInterval`, host.json), the minute timer and
its dispatch tasks, the blob lease of the timer's singleton. Reported per minute and per 30-day month, by
kind, beside the raw storage round trip measured in the same run, so the figure reads in the machine's units
too, and the local host's CPU. bench/cost.py turns the hourly figures into a month's dollars: run by
bench/report.py, the bench records every figure it prints in docs/figures.json (bench/figures.py), phase `idle`
(per hour, as the cost model reads them) and `raw` (the single-entity read).

    python bench/idle.py [--minutes 3]

Figures, not tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import record  # noqa: E402
from bench.harness import Harness, every_minute, pause_until  # noqa: E402

MONTH_MINUTES = 30 * 24 * 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=3, help="measured minutes")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the host, targets and Azurite on a kill
    with tempfile.TemporaryDirectory() as tmp, Harness(Path(tmp), {"target": 0.0}) as harness:
        harness.collection("idle")
        later = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
        url = harness.targets.url("target")
        harness.create_jobs(("idle", f"j{n}", every_minute(later, url)) for n in range(100))
        start = (datetime.now(UTC) + timedelta(minutes=1)).replace(second=0, microsecond=0)
        pause_until(start)
        requests, kinds, invocations = harness.requests(), harness.kinds(), harness.invocations()
        cpu = harness.host_cpu_seconds()
        pause_until(start + timedelta(minutes=args.minutes))
        spent = harness.requests() - requests
        by_kind = harness.kinds() - kinds
        invoked = harness.invocations() - invocations
        cpu = harness.host_cpu_seconds() - cpu
        raw = raw_round_trip(harness)
    per_minute = spent / args.minutes
    print(
        f"[idle] {spent} storage requests in {args.minutes} min: {per_minute:.0f} a minute, "
        f"{per_minute / 60:.2f} a second, {per_minute * MONTH_MINUTES / 1e6:.2f} million a 30-day month; "
        f"{invoked / args.minutes:.1f} function invocations a minute"
    )
    print(
        "[idle] by kind, a minute: "
        + ", ".join(f"{kind} {count / args.minutes:.1f}" for kind, count in by_kind.most_common() if count)
    )
    hours = args.minutes / 60
    print(
        f"[idle] host CPU: {cpu:.2f} s in {args.minutes} min, {cpu / hours:.1f} s an hour "
        f"({cpu / (args.minutes * 60) * 100:.2f} % of a core)"
    )
    print(f"[idle] raw single-entity read in the same run: {raw * 1000:.2f} ms (p50 of 200)")
    idle = {
        "minutes": args.minutes,
        "storage_requests": spent,
        "storage_requests_per_minute": round(per_minute, 2),
        "storage_requests_per_s": round(per_minute / 60, 3),
        "storage_requests_per_hour": round(spent / hours, 1),
        "storage_requests_millions_per_month": round(per_minute * MONTH_MINUTES / 1e6, 3),
        "storage_requests_by_kind_per_hour": {k: round(n / hours, 1) for k, n in by_kind.most_common() if n},
        "invocations_per_minute": round(invoked / args.minutes, 2),
        "invocations_per_hour": round(invoked / hours, 1),
        "host_cpu_s": round(cpu, 3),
        "host_cpu_s_per_hour": round(cpu / hours, 2),
    }
    record("idle", {"idle": idle}, raw={"entity_read_p50_ms": round(raw * 1000, 3)})


def raw_round_trip(harness: Harness) -> float:
    from azure.data.tables import TableServiceClient

    client = TableServiceClient.from_connection_string(harness.azurite.connection_string).get_table_client("rawidle")
    client.create_table()
    client.upsert_entity({"PartitionKey": "p", "RowKey": "r"})
    took = []
    for _ in range(200):
        began = time.perf_counter()
        client.get_entity("p", "r")
        took.append(time.perf_counter() - began)
    return sorted(took)[len(took) // 2]


if __name__ == "__main__":
    main()
