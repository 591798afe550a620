"""DEVHOST_PER_FUNCTION_SCALING: the local host runs its HTTP functions in worker processes of their own, apart from
the queue and timer functions, as Flex Consumption's per-function scaling does.

Why: on Flex Consumption, functions scale per function. All HTTP triggers scale together, as one group, on
instances of their own, and every other function scales on instances of its own
(https://learn.microsoft.com/azure/azure-functions/event-driven-scaling#per-function-scaling). So in the cloud the API
never shares a process (GIL, event loop, thread pool) with the executor. The local host shares one by default, and
under overload the executor slows the API's answers. This setting gives the local host the cloud's split.

Contract:
- `per_function_scaling(env)`: the setting. Unset or empty, "0" or "false" mean off (the default: nothing changes).
  "1" or "true" (any case) mean on. Anything else logs one warning and means off, as `whole_setting` treats a bad
  count. `python -m devhost --per-function-scaling` turns it on.
- `worker_pool(app_dir, count)`: what runs the functions, given FUNCTIONS_WORKER_PROCESS_COUNT's `count`.
  With the setting on, a `ScalingGroups` (`count` processes per group, so two processes by default). With it off,
  a `WorkerPool` of `count` when `count` > 1. Otherwise None: the functions run in the host's process.
- `ScalingGroups(app_dir, count)` has the Invoker's interface (`start`, `stop`, `invoke`). It runs two WorkerPools
  (workers.py) of `count` processes each. HTTP-triggered invocations go to the "HTTP" pool and every other one
  (queue, timer) to the "queue and timer" pool, by the function's trigger type. Within a pool, invocations go
  round robin and a worker that dies is replaced (workers.py). Locally the queue and timer functions share one
  group, where the cloud gives each its own instances. The split that matters is the API's from the executor;
  a group per function would import the app once more per function on a small machine.
- `start()` starts the HTTP pool, then the other. It raises WorkerStartError, leaving nothing running, when
  either pool cannot load the app. `stop(timeout)` stops both pools at once, each within `timeout`.
- `pids`: every worker that is up, HTTP group first. `groups`: each group's pids by its name.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from devhost.indexing import HTTP_TRIGGER, FunctionInfo
from devhost.workers import WorkerPool

log = logging.getLogger(__name__)
PER_FUNCTION_SCALING_SETTING: Final = "DEVHOST_PER_FUNCTION_SCALING"
HTTP_GROUP: Final = "HTTP"
EVENT_GROUP: Final = "queue and timer"
_ON, _OFF = ("1", "true"), ("", "0", "false")


def per_function_scaling(env: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if env is None else env).get(PER_FUNCTION_SCALING_SETTING, "").strip()
    if value.lower() in _ON:
        return True
    if value.lower() not in _OFF:
        log.warning(
            "%s=%r is neither 1/true nor 0/false; the HTTP functions share the worker processes of the others",
            PER_FUNCTION_SCALING_SETTING,
            value,
        )
    return False


class ScalingGroups:
    def __init__(self, app_dir: Path, count: int) -> None:
        self.http = WorkerPool(app_dir, count, HTTP_GROUP)
        self.events = WorkerPool(app_dir, count, EVENT_GROUP)

    @property
    def groups(self) -> dict[str, tuple[int, ...]]:
        return {HTTP_GROUP: self.http.pids, EVENT_GROUP: self.events.pids}

    @property
    def pids(self) -> tuple[int, ...]:
        return self.http.pids + self.events.pids

    def start(self) -> None:
        log.info(
            "Per-function scaling (%s): the HTTP functions run in worker processes apart from the queue and timer "
            "functions, as on Flex Consumption",
            PER_FUNCTION_SCALING_SETTING,
        )
        self.http.start()  # leaves nothing running when it raises
        try:
            self.events.start()
        except BaseException:
            self.http.stop(1.0)
            raise

    def stop(self, timeout: float = 2.0) -> None:
        # Both at once: one after the other, the second would get what the first left of the host's budget.
        http = threading.Thread(target=self.http.stop, args=(timeout,), name="devhost-stop-http", daemon=True)
        http.start()
        self.events.stop(timeout)
        http.join(timeout + 1.0)

    def invoke(self, function: FunctionInfo, trigger_value: Any, reason: str) -> Any:
        pool = self.http if function.trigger_type == HTTP_TRIGGER else self.events
        return pool.invoke(function, trigger_value, reason)


def worker_pool(app_dir: Path, count: int) -> ScalingGroups | WorkerPool | None:
    if per_function_scaling():
        return ScalingGroups(app_dir, count)
    return WorkerPool(app_dir, count) if count > 1 else None
