"""The fixed cost: what the app spends in storage requests and function invocations while nothing is due.

Runs the real app under the local host (as `make run` does) against its own Azurite, with one collection and
jobs that are not due within the run, and counts on the wire everything it does for `--minutes` whole
minutes: the host's queue polling (it backs off to `maxPollingInterval`, host.json), the minute timer and
its dispatch tasks, the blob lease of the timer's singleton. Reported per minute and per 30-day month, by
kind, beside the raw storage round trip measured in the same run, so the figure reads in the machine's units
too. docs/cost.md, "Fixed costs", turns the monthly count into dollars.

    python bench/idle.py [--minutes 3]

Figures, not tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import Harness, every_minute, pause_until  # noqa: E402

MONTH_MINUTES = 30 * 24 * 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=3, help="measured minutes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Harness(Path(tmp), {"target": 0.0}) as harness:
        harness.collection("idle")
        later = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
        url = harness.targets.url("target")
        harness.create_jobs(("idle", f"j{n}", every_minute(later, url)) for n in range(100))
        start = (datetime.now(UTC) + timedelta(minutes=1)).replace(second=0, microsecond=0)
        pause_until(start)
        requests, kinds, invocations = harness.requests(), harness.kinds(), harness.invocations()
        pause_until(start + timedelta(minutes=args.minutes))
        spent = harness.requests() - requests
        by_kind = harness.kinds() - kinds
        invoked = harness.invocations() - invocations
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
    print(f"[idle] raw single-entity read in the same run: {raw * 1000:.2f} ms (p50 of 200)")


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
