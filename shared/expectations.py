"""Per-job silence: a job that carries the expectation "a success at least every D" and has not met it.

The rule (`silent_for`): a job's expectation is broken when its main action has not succeeded for longer than
D, counted from its last success, or from its creation when it never succeeded. Whatever the reason: the job is
Disabled or Faulted, its collection is suspended, its occurrences fail, or the dispatcher lost it. A Completed
job is done (its schedule ended), so it expects nothing more.

`check` runs after every dispatcher tick (shared/health.py): it reads the mirror rows of the jobs that carry an
expectation (one partition query, store/expectations.py) and confirms each broken one against the job itself,
repairing the mirror on the way. The metrics and the alert rule that names the job are in shared/telemetry and
infra/modules/silence.bicep.

`record` keeps what the tick's check found in one row (`dispatcher`/`silence` in the State table, next to the
heartbeat): how many jobs are silent and the `LISTED_LIMIT` longest silent of them. `recorded` reads it back
for GET /api/health and so `scheduler doctor` (shared/api/health.py). A health call therefore costs one point
read however many jobs opted in, instead of the partition query and job reads of a check: the health route is
anonymous and asked every few minutes from several places, the answer is at most one tick (a minute) old, and
when the ticks stop the health answer says that first. A check that failed writes nothing, so the row keeps
the last finding (with its time) rather than claiming that nothing is silent.

The expectation is a stored field of the job (`JobRecord.expect_success_within`), default off: the property
`expectSuccessWithin` of api-version 2026-12-01-preview; 2016-03-01 neither shows nor loses it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .keys import JobKey
from .model import JobState
from .store import ExpectationIndex, JobStore
from .store.expectations import Expectation, of_record
from .store.tables import Table, as_datetime, as_int

log = logging.getLogger(__name__)

# Broken expectations confirmed against their jobs per check, at most: past it the mirror is trusted as it is,
# so a mass outage costs one partition query and a bounded number of reads per tick.
CONFIRM_LIMIT = 100
# Silent jobs the recorded finding lists by name, the longest silent first (all are counted): enough to act on,
# and a row and a health answer of a few kilobytes whatever happens; past it the metric and alerts name each.
LISTED_LIMIT = 20
_PARTITION, _ROW = "dispatcher", "silence"


@dataclass(frozen=True)
class Broken:
    job: JobKey
    within: timedelta
    last_success: datetime | None  # None: never succeeded
    silent: timedelta  # how long it has been without a success
    state: JobState


@dataclass(frozen=True)
class Silence:
    """What the last check found: `count` silent jobs, the longest silent first in `jobs` (up to LISTED_LIMIT;
    `silent` as of `checked_at`)."""

    checked_at: datetime | None = None  # None: no check recorded yet
    count: int = 0
    jobs: list[Broken] = field(default_factory=list)


def silent_for(expectation: Expectation, now: datetime) -> timedelta | None:
    """How long the job has gone without a success, when that breaks its expectation; else None."""
    if expectation.state == JobState.COMPLETED:
        return None
    reference = expectation.last_success or expectation.created
    if reference is None:
        return None
    silent = now - reference
    return silent if silent > expectation.within else None


def check(index: ExpectationIndex, jobs: JobStore, now: datetime) -> list[Broken]:
    """Every job whose expectation is broken now."""
    broken: list[Broken] = []
    confirmed = 0
    for mirrored in index.all():
        if silent_for(mirrored, now) is None:
            continue
        current: Expectation | None = mirrored
        if confirmed < CONFIRM_LIMIT:
            confirmed += 1
            current = _confirm(index, jobs, mirrored)
        silent = silent_for(current, now) if current is not None else None
        if current is not None and silent is not None:
            broken.append(Broken(current.job, current.within, current.last_success, silent, current.state))
    for item in broken:
        log.warning(
            "job %s has not succeeded for %d s (expected at least every %d s; state %s)",
            item.job.resource_id,
            item.silent.total_seconds(),
            item.within.total_seconds(),
            item.state.value,
        )
    return broken


def _confirm(index: ExpectationIndex, jobs: JobStore, mirrored: Expectation) -> Expectation | None:
    """The job's expectation as stored now (the mirror repaired to match); None when it has none any more."""
    try:
        record = jobs.get(mirrored.job)
    except Exception:  # an unreadable job or a storage fault: the mirror stands until the next check
        log.warning("the expectation of %s could not be confirmed", mirrored.job.resource_id, exc_info=True)
        return mirrored
    current = of_record(record) if record is not None else None
    if current is None:
        index.forget(mirrored.job)  # deleted, or its expectation was removed
    elif current != mirrored and record is not None:
        index.mirror(record)
    return current


def record(state: Table, at: datetime, broken: list[Broken]) -> None:
    """Keep what the check at `at` found, for the health answer (one row, replaced each tick)."""
    listed = sorted(broken, key=lambda b: b.silent, reverse=True)[:LISTED_LIMIT]
    jobs = [
        {
            "job": [b.job.subscription, b.job.resource_group, b.job.collection, b.job.job],
            "within": b.within.total_seconds(),
            "lastSuccess": b.last_success.isoformat() if b.last_success else None,
            "silent": b.silent.total_seconds(),
            "state": b.state.value,
        }
        for b in listed
    ]
    state.upsert(
        {
            "PartitionKey": _PARTITION,
            "RowKey": _ROW,
            "CheckedAt": at,
            "Count": len(broken),
            "Jobs": json.dumps(jobs, ensure_ascii=False, separators=(",", ":")),
        }
    )


def recorded(state: Table) -> Silence:
    """The last check's finding (an empty Silence when none was recorded; a row it cannot parse lists no job)."""
    entity = state.get(_PARTITION, _ROW) or {}
    try:
        jobs = [
            Broken(
                JobKey(*item["job"]),
                timedelta(seconds=float(item["within"])),
                datetime.fromisoformat(item["lastSuccess"]) if item["lastSuccess"] else None,
                timedelta(seconds=float(item["silent"])),
                JobState(item["state"]),
            )
            for item in json.loads(entity.get("Jobs") or "[]")
        ]
    except (KeyError, TypeError, ValueError):  # a row of another version: its count still stands
        log.warning("the recorded silent jobs could not be read", exc_info=True)
        jobs = []
    return Silence(as_datetime(entity.get("CheckedAt")), as_int(entity.get("Count")), jobs)
