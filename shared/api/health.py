"""GET /api/health: anonymous, so a probe or an operator can ask without a key; therefore it says nothing secret.

It reports whether storage answers, when the dispatcher last ticked (shared/health.py's heartbeat), the backlog
(overdue due-index entries, the oldest of them, messages in the poison queue), the executor's backlog
(`executor`: `queuedMessages` in the occurrence queue, about, hidden ones too; `frontDue` of the front waiting
message; `heldDue` and `heldBatches`, the earliest of the batches the hosts hold waiting and their count;
`behindSeconds` of the earliest of the two; `behind` past `behindAfterSeconds`) and the host's clock against
storage's, with `problems`, one sentence each. Status:
- `Healthy` (200): nothing to say;
- `Degraded` (200): something to look at that does not stop jobs from running on time (poisoned messages, a
  backlog younger than two intervals, a skewed clock, no tick yet on a store made ready moments ago), or an
  executor behind (`executor.behind`: more is due than the hosts run; occurrences still run, late, so a probe
  must not take the service out of rotation, which would only make it later);
- `Unhealthy` (503, with Retry-After): the dispatcher is behind (no heartbeat for two intervals, or an
  occurrence overdue that long; `dispatcher.behind`; a host that has not ticked yet is held to its own start,
  shared/health.py), or storage cannot be reached (any passing storage fault, store/failures.py; a bug is
  not one, and reaches the API's boundary as a 500). A load balancer probe or an availability test
  (infra/modules/availability.bicep) catches it by the status alone.
`silentJobs` lists the jobs past their expectation of success as the last tick found them
(shared/expectations.py `record`): `count`, `checkedAt` and, longest silent first, up to 20 `jobs`, each with its
`id`, `expectSuccessWithin`, `lastSuccess` (null: never), `silentSince` (its last success, or its creation) and
`state`. They do not change the status, nor appear in `problems`: a job that does not succeed is its owner's
to look at, and a probe must not take a working service out of rotation for it.
No URLs, settings or error texts are returned, and no names where the API is closed: a job's id (subscription,
group, collection and job names) is listed only when the API itself is open to anyone (`SCHEDULER_AUTH=none`,
the local host's default); with `key` or `entra` this anonymous answer gives the count and `checkedAt` alone,
and the alert rule, the `scheduler.job.silence` metric and the log name each job (docs/operate.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ..expectations import Silence
from ..health import BEHIND_AFTER, HEARTBEAT_INTERVAL, problems, snapshot
from ..model import format_duration, format_utc
from ..runtime import Runtime
from ..store.failures import passing
from .http import STORAGE_RETRY_AFTER, ApiResponse

log = logging.getLogger(__name__)

_NO_STORE = {"Cache-Control": "no-store"}
# A 503 says when to ask again: storage's outage as every route says it (http.py); a dispatcher behind cannot
# change before its next tick.
_UNREACHABLE = {**_NO_STORE, "Retry-After": str(STORAGE_RETRY_AFTER)}
_BEHIND = {**_NO_STORE, "Retry-After": str(int(HEARTBEAT_INTERVAL.total_seconds()))}


def _seconds(span: timedelta | None) -> float | None:
    return round(span.total_seconds(), 3) if span is not None else None


def _instant(when: datetime | None) -> str | None:
    return format_utc(when) if when is not None else None


def _silent_jobs(silence: Silence, now: datetime, named: bool) -> dict[str, Any]:
    answer: dict[str, Any] = {"count": silence.count, "checkedAt": _instant(silence.checked_at)}
    if not named:
        return answer
    jobs = []
    for job in silence.jobs:
        since = (silence.checked_at or now) - job.silent
        jobs.append(
            {
                "id": job.job.resource_id,
                "expectSuccessWithin": format_duration(job.within),
                "lastSuccess": _instant(job.last_success),
                "silentSince": format_utc(since),
                "silentSeconds": _seconds(now - since),
                "state": job.state.value,
            }
        )
    return answer | {"jobs": jobs}


def health_response(runtime: Callable[[], Runtime]) -> ApiResponse:
    try:
        rt = runtime()
        # A host whose timer is switched off will not tick: it is not spared the ticks it could not yet have made.
        found = snapshot(rt.store, rt.clock.now(), None if rt.settings.dispatcher_disabled else rt.started)
    except Exception as error:
        if not passing(error):
            raise  # a bug is not an unreachable storage: the boundary answers 500 and logs it
        log.warning("health check: storage is not reachable: %s", type(error).__name__)
        return ApiResponse(503, {"status": "Unhealthy", "storage": {"reachable": False}}, _UNREACHABLE)
    said = problems(found)
    since = found.since_last_tick
    body: dict[str, Any] = {
        "status": "Unhealthy" if found.behind else "Degraded" if said else "Healthy",
        "checkedAt": format_utc(found.now),
        "storage": {"reachable": True},
        "dispatcher": {
            "lastTick": _instant(found.last_tick),
            "secondsSinceLastTick": _seconds(since),
            "lastTickDurationSeconds": found.last_tick_duration,
            "lastTickTasks": found.last_tick_tasks,
            "ticking": since is not None and since <= BEHIND_AFTER,
            "behind": found.behind,
            "intervalSeconds": int(HEARTBEAT_INTERVAL.total_seconds()),
        },
        "backlog": {
            "overdueOccurrences": found.backlog,
            "oldestOverdueOccurrence": _instant(found.oldest_overdue),
            "oldestOverdueSeconds": _seconds(found.oldest_overdue_age),
            "poisonMessages": found.poison_depth,
        },
        "executor": {
            "queuedMessages": found.executor.queued,
            "frontDue": _instant(found.executor.front_due),
            "heldDue": _instant(found.executor.held_due),
            "heldBatches": found.executor.held,
            "behindSeconds": _seconds(found.executor_lateness),
            "behind": found.executor_behind,
            "behindAfterSeconds": found.executor_behind_after.total_seconds(),
        },
        "clock": {"skewSecondsAgainstStorage": _seconds(found.clock_skew)},
        "problems": said,
        "silentJobs": _silent_jobs(found.silence, found.now, named=rt.settings.auth.mode == "none"),
    }
    return ApiResponse(503, body, _BEHIND) if found.behind else ApiResponse(200, body, _NO_STORE)
