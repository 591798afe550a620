"""Per-job silence: a job that carries the expectation "a success at least every D" and has not met it.

The rule (`silent_for`): a job's expectation is broken when its main action has not succeeded for longer than
D, counted from its last success, or from its creation when it never succeeded. Whatever the reason: the job is
Disabled or Faulted, its collection is suspended, its occurrences fail, or the dispatcher lost it. A Completed
job is done (its schedule ended), so it expects nothing more.

`check` runs after every dispatcher tick (shared/health.py): it reads the mirror rows of the jobs that carry an
expectation (one partition query, store/expectations.py) and confirms each broken one against the job itself,
repairing the mirror on the way. The metrics and the alert rule that names the job are in shared/telemetry and
infra/modules/silence.bicep.

The expectation is a stored field of the job (`JobRecord.expect_success_within`), default off. The newer
api-version of the extension API will set it; until then nothing in the 2016-03-01 API shows or sets it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from .keys import JobKey
from .model import JobState
from .store import ExpectationIndex, JobStore
from .store.expectations import Expectation, of_record

log = logging.getLogger(__name__)

# Broken expectations confirmed against their jobs per check, at most: past it the mirror is trusted as it is,
# so a mass outage costs one partition query and a bounded number of reads per tick.
CONFIRM_LIMIT = 100


@dataclass(frozen=True)
class Broken:
    job: JobKey
    within: timedelta
    last_success: datetime | None  # None: never succeeded
    silent: timedelta  # how long it has been without a success
    state: JobState


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
