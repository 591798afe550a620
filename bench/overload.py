"""Graceful overload (issue 41 item 6): twice the load one host carries, then a lower one. Does the API still
answer, does lateness grow steadily and come back once the load drops, is nothing lost, and does health say the
executor is behind, with its backlog?

Runs the real app under the local host (as `make run` does; its processes: the flags below) against its own Azurite
(bench/harness.py), with every-minute jobs spread over the seconds of the minute (job n at second n % 60),
`--rate` x 60 of them in collections of 1,000: `--rate` executions due every second. The default, 300 a second,
was twice what one host process carried on the 2-core machine when issue 41 was measured (about 135 a second); it
carries more now, and this bench's `executions_per_s` during the overload says how much (docs/figures.md, overload /
overload), so twice it is a higher `--rate`. After `--overload-minutes` all but
`--after-rate` x 60 of the jobs end: their recurrence's `endTime` is the drop, set when they were created, so the
load falls to `--after-rate` a second for `--after-minutes` without anyone touching the API in the middle of the
overload (a campaign's jobs that end, the least artificial drop: a disable would also skip the occurrences
already queued, and they could no longer be counted).
Jobs are created through the API before the first minute, with room for about 40 PUTs a second (the API's rate
on this machine is about 50), so their creation never overlaps the firing (a warning says when it did).

Throughout (bench/overload_probes.py): one job PUT a second through the API (a new one-shot job 30 days ahead),
timed; GET /api/health every 10 s, recorded (status, the executor's backlog, problems); every arrival at the
target (job, due, arrived). Reported and recorded (bench/figures.py) by bench/overload_report.py as phases
`overload` and `after`: API PUT p50/p99/max; lateness p50/p99/max per 20-second window of due instants; when
lateness came back under 1 s after the drop; what health said at its worst and at the end; occurrences expected
vs arrived, lost, let go by their missed-run policy (over 2 minutes late, from the host's log), duplicated,
early; storage requests, function invocations and host CPU per execution (arrivals in the phase's window), and
raw storage measured in the same run (the probes' own requests are among the storage requests: a PUT a second
and a health read every 10 s, next to hundreds of executions a second). After the last minute it waits for the
backlog of due occurrences to arrive (until nothing more arrives for 15 s and health says the executor is no more
than that behind, at most `DRAIN_MOST`), and 20 s more for duplicates.

    python bench/overload.py [--rate 300] [--overload-minutes 2] [--after-rate 20] [--after-minutes 5] [--workers 1]
        [--per-function-scaling]

`--workers` runs the local host with that many worker processes (FUNCTIONS_WORKER_PROCESS_COUNT, as steady.py):
what it carries changes, so twice it is another `--rate`; the phases record `workers`.
`--per-function-scaling` runs the API (the HTTP functions) in worker processes apart from the executor and the
dispatcher (DEVHOST_PER_FUNCTION_SCALING, `--workers` of each), as Flex Consumption scales them: the API then does
not share the executor's GIL, event loop and thread pool, as in the cloud. The executor keeps `--workers`
processes, so `--rate` is still meant as twice what it carries (`executions_per_s` measures it).
The phases record `per_function_scaling`; bench/report.py runs it so.

Promises (issue 41): p99 of a job PUT <= 1 s; lateness grows steadily and comes back; nothing fails or is lost;
health says the executor is behind, with the backlog. Figures, not tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import overload_report  # noqa: E402
from bench.figures import record  # noqa: E402
from bench.harness import Harness, every_minute, next_minute, pause_until  # noqa: E402
from bench.idle import raw_round_trip  # noqa: E402
from bench.overload_probes import Probes  # noqa: E402
from bench.overload_report import Load, Meter  # noqa: E402
from bench.phase_figures import raw_read  # noqa: E402

COLLECTION_SIZE = 1000
PUTS_PER_S = 40  # what the job creation is given room for (the API takes about 50 a second here)
WATCH = timedelta(seconds=20)  # for duplicates, after the last arrival
QUIET = 15.0  # seconds without a new arrival, and at most so far behind, that end the drain
DRAIN_MOST = timedelta(minutes=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=300, help="executions per second during the overload")
    parser.add_argument("--overload-minutes", type=int, default=2)
    parser.add_argument("--after-rate", type=int, default=20, help="executions per second once the load drops")
    # Five: the backlog of two minutes at twice the capacity (about 18,000) drains at what the host carries beyond
    # the lower load (100-130 a second), about three minutes; with three the bench ended before it could show.
    parser.add_argument("--after-minutes", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds the target takes to answer")
    parser.add_argument(
        "--workers", type=int, default=1, help="the local host's worker processes (FUNCTIONS_WORKER_PROCESS_COUNT)"
    )
    parser.add_argument(
        "--per-function-scaling",
        action="store_true",
        help="run the HTTP functions in worker processes apart from the others, as Flex Consumption does "
        "(DEVHOST_PER_FUNCTION_SCALING; --workers of each)",
    )
    args = parser.parse_args()
    if not 0 < args.after_rate < args.rate:
        parser.error("--after-rate must be more than 0 and less than --rate")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    jobs, staying = args.rate * 60, args.after_rate * 60
    with (
        tempfile.TemporaryDirectory() as tmp,
        Harness(
            Path(tmp), {"target": args.delay}, workers=args.workers, per_function_scaling=args.per_function_scaling
        ) as harness,
    ):
        raw = raw_round_trip(harness)  # straight to Azurite, before any load
        url = harness.targets.url("target")
        collections = [f"o{n}" for n in range((jobs + COLLECTION_SIZE - 1) // COLLECTION_SIZE)]
        for name in collections:
            harness.collection(name)
        first = next_minute(datetime.now(UTC), timedelta(minutes=2) + timedelta(seconds=jobs / PUTS_PER_S))
        drop = first + timedelta(minutes=args.overload_minutes)
        end = drop + timedelta(minutes=args.after_minutes)
        load = Load(first, drop, end, {f"r{n}": n < staying for n in range(jobs)})

        def job(n: int) -> tuple[str, str, dict[str, Any]]:
            properties = every_minute(first + timedelta(seconds=n % 60), url)
            if n >= staying:  # its last occurrence is before the drop
                properties["recurrence"]["endTime"] = (drop - timedelta(seconds=0.5)).isoformat()
            return collections[n // COLLECTION_SIZE], f"r{n}", properties

        took = harness.create_jobs(job(n) for n in range(jobs))
        late = datetime.now(UTC) > first - timedelta(minutes=1, seconds=50)
        print(
            f"created {jobs} every-minute jobs ({jobs - staying} ending at the drop) in {len(collections)} "
            f"collections in {took:.1f} s ({jobs / took:.0f} PUT/s); first occurrences at {first:%H:%M}Z, "
            f"the drop at {drop:%H:%M}Z, the end at {end:%H:%M}Z",
            flush=True,
        )
        if late:
            print("warning: the jobs were created late; the API, not the timer, queued the first occurrences")
        create = {"jobs": jobs, "ending": jobs - staying, "collections": len(collections), "seconds": round(took, 1)}
        create |= {"puts_per_s": round(jobs / took, 1), "created_late": late}

        probes = Probes(harness.base, url)
        pause_until(first - timedelta(seconds=30))
        probes.start()
        # Costs are counted over [first - 1 s, drop - 1 s) and [drop - 1 s, end - 1 s): the minute ticks in each.
        pause_until(first - timedelta(seconds=1))
        start = Meter.read(harness)
        pause_until(drop - timedelta(seconds=1))
        middle = Meter.read(harness)
        pause_until(end - timedelta(seconds=1))
        finish = Meter.read(harness)
        drained = drain(harness, load, probes)
        pause_until(datetime.now(UTC) + WATCH)
        probes.stop()
        arrivals = harness.targets.arrivals()
        let_go = overload_report.let_go_in_log(harness.log_path)

    phases = overload_report.report(load, arrivals, let_go, probes, (start, middle, finish), drained)
    layout = {"workers": args.workers, "per_function_scaling": args.per_function_scaling}
    phases["overload"] |= {"rate_per_s": args.rate, "target_delay_s": args.delay, **layout}
    phases["after"] |= {"rate_per_s": args.after_rate, **layout}
    record("overload", {**phases, "create": create}, raw_read(raw))


def drain(harness: Harness, load: Load, probes: Probes) -> datetime:
    """Wait until the occurrences due before the end stop arriving (QUIET s without one) and health, asked after
    the last, says the executor is no more than QUIET s behind: occurrences let go by their missed-run policy
    arrive nowhere, so a spell of them without an arrival is no end of the backlog. At most DRAIN_MOST past the
    end; when the last of them arrived."""
    seen, last = 0, datetime.now(UTC)
    while datetime.now(UTC) < load.end + DRAIN_MOST:
        due = [a for a in harness.targets.arrivals() if a.expected < load.end]
        if len(due) > seen:
            seen, last = len(due), max(a.at for a in due)
        elif (datetime.now(UTC) - last).total_seconds() > QUIET and _caught_up(probes, last):
            break
        time.sleep(1.0)
    return last


def _caught_up(probes: Probes, since: datetime) -> bool:
    """Whether the last health answer after `since` says the executor's front message is at most QUIET s late."""
    after = [h for h in list(probes.health) if h.at > since and h.status]
    return bool(after) and (after[-1].behind_s or 0.0) <= QUIET


if __name__ == "__main__":
    main()
