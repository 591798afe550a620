"""Occurrence accounting and silence: counts the dispatcher and the executor hand over, and what a tick saw.

Per collection (attribute `scheduler.collection`, the collection's resource id; plus `scheduler.job.id` when
SCHEDULER_METRICS_PER_JOB is set):

- `occurrence_planned(job, queued=, missed=, state=)`: the dispatcher advanced a job past a due occurrence.
  Expected: 1 plus the occurrences the schedule called for while the scheduler was down (`missed`, skipped with
  reason `missed`: only the latest runs). Dispatched when queued; otherwise skipped for the job's state
  (`job_disabled`, `job_completed`, `job_faulted`).
- `occurrence_skipped(message, reason)`: the executor did not run a queued occurrence (`job_changed`: deleted
  or redefined since; `job_<state>`; `collection_not_enabled`; `collection_paused`: held by its pause).
- `occurrence_ran(message, succeeded)` (from `attempt_done`): fired on the main action's first attempt,
  succeeded when the main action succeeded on any attempt. Retries and error actions are not occurrences.
- `tick_observed(observation)`: what the dispatcher's heartbeat saw (shared/health.py `TickObservation`):
  one heartbeat, backlog, poison depth, the oldest overdue occurrence's age per collection, and the jobs whose
  expectation of success is broken (count per collection, and each job's silence, named by its id).

A redelivered message may count its occurrence twice; these are rates to compare, not a ledger. Gauges that
stop applying (a collection no longer overdue, a job that succeeded again) are set to 0 once, so a reader
that keeps the last value does not show a stale one.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, cast

from .providers import Active, active

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., None])

COLLECTION_ID = "scheduler.collection"
JOB_ID = "scheduler.job.id"
STATE = "scheduler.job.state"
REASON = "reason"
TRIGGER = "trigger"
MAIN_ACTION = "MainAction"

_lock = threading.Lock()


def _quiet(hook: F) -> F:
    """Counting never breaks what is counted: a failure here is logged and the caller goes on."""

    @functools.wraps(hook)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            hook(*args, **kwargs)
        except Exception:
            log.warning("telemetry: %s failed", hook.__name__, exc_info=True)

    return cast(F, wrapper)


def _scope(current: Active, job: Any) -> dict[str, str]:
    attributes = {COLLECTION_ID: str(job.collection_key.resource_id)}
    if current.per_job:
        attributes[JOB_ID] = str(job.resource_id)
    return attributes


def _state_name(state: Any) -> str:
    return str(getattr(state, "value", state)).lower()


@_quiet
def occurrence_planned(job: Any, *, queued: bool, missed: int, state: Any) -> None:
    current = active()
    if not current.enabled:
        return
    scope = _scope(current, job)
    counters = current.instruments
    counters.expected.add(1 + missed, scope)
    if missed:
        counters.skipped.add(missed, {**scope, REASON: "missed"})
    if queued:
        counters.dispatched.add(1, scope)
    else:
        counters.skipped.add(1, {**scope, REASON: f"job_{_state_name(state)}"})


def _first_main_attempt(message: Any) -> bool:
    return int(message.attempt) == 0 and str(getattr(message.action, "value", message.action)) == MAIN_ACTION


@_quiet
def occurrence_skipped(message: Any, reason: str) -> None:
    current = active()
    if not current.enabled or not _first_main_attempt(message):
        return
    current.instruments.skipped.add(
        1, {**_scope(current, message.job), REASON: reason, TRIGGER: str(message.trigger.value)}
    )


@_quiet
def occurrence_ran(current: Active, message: Any, succeeded: bool) -> None:
    if str(getattr(message.action, "value", message.action)) != MAIN_ACTION:
        return
    scope = {**_scope(current, message.job), TRIGGER: str(message.trigger.value)}
    if int(message.attempt) == 0:
        current.instruments.fired.add(1, scope)
    if succeeded:
        current.instruments.succeeded.add(1, scope)


@_quiet
def tick_observed(observation: Any) -> None:
    current = active()
    instruments = current.instruments
    instruments.heartbeats.add(1)
    instruments.backlog.set(int(observation.backlog))
    instruments.poison_depth.set(int(observation.poison_depth))
    if not current.enabled:
        return
    at = observation.at
    ages = {
        (COLLECTION_ID, str(key.resource_id)): (at - due).total_seconds()
        for key, due in observation.overdue_by_collection.items()
    }
    _set(instruments, "overdue_age", {(k,): max(v, 0.0) for k, v in ages.items()})
    per_collection: dict[tuple[tuple[str, str], ...], float] = {}
    silence: dict[tuple[tuple[str, str], ...], float] = {}
    for broken in observation.broken_expectations:
        collection = (COLLECTION_ID, str(broken.job.collection_key.resource_id))
        per_collection[(collection,)] = per_collection.get((collection,), 0) + 1
        silence[(collection, (JOB_ID, str(broken.job.resource_id)), (STATE, _state_name(broken.state)))] = (
            broken.silent.total_seconds()
        )
    _set(instruments, "expectations_broken", per_collection)
    _set(instruments, "job_silence", silence)


def _set(instruments: Any, name: str, values: dict[tuple[tuple[str, str], ...], float]) -> None:
    gauge = getattr(instruments, name)
    with _lock:
        gone: Iterable[tuple[tuple[str, str], ...]] = instruments.shown.get(name, set()) - values.keys()
        for key in gone:
            gauge.set(0, dict(key))
        for key, value in values.items():
            gauge.set(value, dict(key))
        instruments.shown[name] = set(values)
