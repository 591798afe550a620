"""GET /api/health: anonymous, so a probe or an operator can ask without a key; therefore it says nothing secret.

It reports whether storage answers, when the dispatcher last ticked (shared/health.py's heartbeat) and the
backlog: overdue due-index entries and messages in the poison queue. Status `Healthy`; `Degraded` (still 200)
when the last tick is older than `STALE_TICK`, no tick was ever recorded, or anything is overdue or poisoned;
`Unhealthy` (503) when storage cannot be reached. No names, URLs, settings or error texts are returned.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from ..health import snapshot
from ..model import format_utc
from ..runtime import Runtime
from .http import ApiResponse

log = logging.getLogger(__name__)

# The minute timer missing five ticks in a row: the same threshold as the "no dispatcher tick" alert.
STALE_TICK = timedelta(minutes=5)


def health_response(runtime: Callable[[], Runtime]) -> ApiResponse:
    try:
        rt = runtime()
        now = rt.clock.now()
        found = snapshot(rt.store, now)
    except Exception:  # any failure to reach storage is the answer, not an error
        log.warning("health check: storage is not reachable", exc_info=True)
        return ApiResponse(503, {"status": "Unhealthy", "storage": {"reachable": False}},
                           {"Cache-Control": "no-store"})
    age = (now - found.last_tick).total_seconds() if found.last_tick else None
    ticking = age is not None and age <= STALE_TICK.total_seconds()
    body: dict[str, Any] = {
        "status": "Healthy" if ticking and not found.backlog and not found.poison_depth else "Degraded",
        "checkedAt": format_utc(now),
        "storage": {"reachable": True},
        "dispatcher": {
            "lastTick": format_utc(found.last_tick) if found.last_tick else None,
            "secondsSinceLastTick": round(age, 3) if age is not None else None,
            "lastTickDurationSeconds": found.last_tick_duration,
            "lastTickTasks": found.last_tick_tasks,
            "ticking": ticking,
        },
        "backlog": {"overdueOccurrences": found.backlog, "poisonMessages": found.poison_depth},
    }
    return ApiResponse(200, body, {"Cache-Control": "no-store"})
