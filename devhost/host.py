"""LocalHost: the in-process stand-in for the Functions host + Python worker, for `python -m devhost` and tests.

Contract:
- `LocalHost(app_dir, port=0, host="127.0.0.1")`; `start()` applies local.settings.json (environment wins;
  skip with load_settings=False), reads host.json, indexes the app (indexing.py) and returns once the HTTP
  server listens and the queue listeners and timers run (monitored timers keep their schedule status in
  AzureWebJobsStorage and fire a missed occurrence at start, schedule_monitor.py). It raises, leaving
  nothing running, when the app cannot be hosted (unsupported trigger, bad schedule, missing connection
  setting, storage unreachable).
- After start: `port`, `base_url` ("http://127.0.0.1:<port>/<routePrefix>"), `functions` (the indexed
  FunctionInfo tuple), `app_module` (the imported module).
- Routes that need a Functions key get one checked (keys.py); `keys` holds the keys (None when every route is
  anonymous), and a generated one is logged once at start. Keys it cannot check raise KeyConfigurationError
  from `start()`, before anything runs.
- `stop()` is idempotent and returns within about `stop_timeout` seconds even if functions still run;
  those are abandoned (their queue messages reappear after the receive visibility timeout).
- SCHEDULER_CLOCK_OFFSET_SECONDS (shared/settings/clock_offset.py; `python -m devhost --clock-offset` sets it) moves
  the timers' clock by that many seconds from real time, as it moves the app's runtime clock: one offset for both.
  `clock_offset` holds it; start() refuses a malformed one, or one on storage other than Azurite (ConfigurationError).
- A function whose app setting `AzureWebJobs.<name>.Disabled` is true is indexed but not triggered (its
  timer does not fire, its queue is not polled, its route answers 404), as on the Functions host.
- FUNCTIONS_WORKER_PROCESS_COUNT (workers.py): with 2-10 the functions run in that many worker processes, the
  host keeping the HTTP front end, queue listeners, timers, schedule monitor and keys, as the Functions host
  does; `worker_pids` names them (empty when the functions run in this process, the default).
- DEVHOST_PER_FUNCTION_SCALING=1 (per_function_scaling.py): the HTTP functions run in worker processes of their own
  and the queue and timer functions in others (FUNCTIONS_WORKER_PROCESS_COUNT of each), as Flex Consumption scales
  them apart; `worker_pids` names both groups' processes.
- Usable as a context manager (start on enter, stop on exit).
"""

from __future__ import annotations

import logging
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Protocol

from devhost.hostconfig import HostConfig
from devhost.http_server import HttpFrontend
from devhost.indexing import HTTP_TRIGGER, QUEUE_TRIGGER, TIMER_TRIGGER, FunctionInfo, index_app
from devhost.invoker import Invoker, Invokes
from devhost.keys import ADMIN, FUNCTION_KEY_SETTING, MASTER_KEY_SETTING, FunctionKeys, level_of
from devhost.per_function_scaling import ScalingGroups, worker_pool
from devhost.queues import QueueListener
from devhost.routing import Router
from devhost.schedule_monitor import ScheduleMonitor, host_id
from devhost.settings import SettingsError, apply_settings, function_disabled, read_local_settings, storage_connection
from devhost.timers import TimerScheduler
from devhost.workers import WorkerPool, worker_process_count
from shared.clock import clock_with_offset
from shared.settings.clock_offset import clock_offset

log = logging.getLogger(__name__)


class _Stoppable(Protocol):
    def stop(self, timeout: float) -> None: ...


def display_host(host: str) -> str:
    """The address a client on this machine uses for a bind address."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


class LocalHost:
    def __init__(
        self,
        app_dir: Path,
        port: int = 0,
        host: str = "127.0.0.1",
        *,
        load_settings: bool = True,
        stop_timeout: float = 2.0,
    ) -> None:
        self.app_dir = Path(app_dir).resolve()
        self.requested_port = port
        self.host = host
        self.load_settings = load_settings
        self.stop_timeout = stop_timeout
        self._config: HostConfig | None = None
        self._functions: tuple[FunctionInfo, ...] | None = None
        self._module: ModuleType | None = None
        self._http: HttpFrontend | None = None
        self._pool: WorkerPool | ScalingGroups | None = None
        self._running: list[_Stoppable] = []
        self.keys: FunctionKeys | None = None
        self.clock_offset = timedelta(0)

    def _require_started(self) -> None:
        if self._functions is None:
            raise RuntimeError("LocalHost is not started: call start() first")

    @property
    def functions(self) -> tuple[FunctionInfo, ...]:
        self._require_started()
        assert self._functions is not None
        return self._functions

    @property
    def app_module(self) -> ModuleType:
        self._require_started()
        assert self._module is not None
        return self._module

    @property
    def worker_pids(self) -> tuple[int, ...]:
        return () if self._pool is None else self._pool.pids

    @property
    def port(self) -> int:
        if self._http is None:
            raise RuntimeError("LocalHost is not started: call start() first")
        return self._http.port

    @property
    def base_url(self) -> str:
        assert self._config is not None
        root = f"http://{display_host(self.host)}:{self.port}"
        return f"{root}/{self._config.route_prefix}" if self._config.route_prefix else root

    def start(self) -> LocalHost:
        if self._running:
            raise RuntimeError("LocalHost is already started")
        if self.load_settings:
            apply_settings(read_local_settings(self.app_dir).values)
        self.clock_offset = offset = clock_offset(os.environ)
        self._config = config = HostConfig.load(self.app_dir)
        index = index_app(self.app_dir)
        self._pool = worker_pool(self.app_dir, worker_process_count())
        invoker: Invokes = self._pool or Invoker()
        disabled = {f.name for f in index.functions if function_disabled(f.name)}
        if disabled:
            log.info("Disabled by AzureWebJobs.<name>.Disabled: %s", ", ".join(sorted(disabled)))
        by_type = {
            kind: [f for f in index.functions if f.trigger_type == kind and f.name not in disabled]
            for kind in (HTTP_TRIGGER, TIMER_TRIGGER, QUEUE_TRIGGER)
        }
        router = Router(config.route_prefix, [(f.route or f.name, f.methods, f) for f in by_type[HTTP_TRIGGER]])
        keys = FunctionKeys.for_app(index.functions)
        try:
            invoker.start()
            self._running.append(invoker)
            for function in by_type[QUEUE_TRIGGER]:
                listener = QueueListener(function, config.queues, invoker)
                listener.start()
                self._running.append(listener)
            if by_type[TIMER_TRIGGER]:
                clock = clock_with_offset(offset).now
                scheduler = TimerScheduler(by_type[TIMER_TRIGGER], invoker, clock, self._schedule_monitor())
                scheduler.start()
                self._running.append(scheduler)
            self._http = HttpFrontend(router, invoker, self.host, self.requested_port, keys)
            self._http.start()
            self._running.append(self._http)
        except BaseException:
            self.stop()
            raise
        self._functions, self._module, self.keys = index.functions, index.module, keys
        self._log_functions()
        self._log_generated_keys()
        if offset:
            log.warning(
                "Clock offset %+.3f s (SCHEDULER_CLOCK_OFFSET_SECONDS): the timers and the app read %s as now",
                offset.total_seconds(),
                (datetime.now(UTC) + offset).isoformat(timespec="seconds"),
            )
        return self

    def _log_generated_keys(self) -> None:
        """Print each generated key the routes take, once (a key from the settings is never printed)."""
        keys = self.keys
        if keys is None:
            return
        shown = []
        if FUNCTION_KEY_SETTING in keys.generated:
            shown.append(f"function key {keys.function_key}")
        if MASTER_KEY_SETTING in keys.generated and any(
            level_of(f) == ADMIN for f in self.functions if f.trigger_type == HTTP_TRIGGER
        ):
            shown.append(f"master key {keys.master_key}")
        if shown:
            log.warning(
                "Generated for this run (send as the x-functions-key header or ?code=; set %s to choose them): %s",
                " or ".join(keys.generated),
                ", ".join(shown),
            )

    def _schedule_monitor(self) -> ScheduleMonitor | None:
        """Timers' schedule status in AzureWebJobsStorage, as the host keeps it; None without that setting."""
        try:
            connection = storage_connection(None)
        except SettingsError:
            return None
        return ScheduleMonitor(connection, host_id(self.app_dir))

    def _log_functions(self) -> None:
        lines = []
        for f in self.functions:
            if f.trigger_type == HTTP_TRIGGER:
                methods = ",".join(f.methods) if f.methods else "all methods"
                lines.append(f"  {f.name}: [{methods}] {self.base_url}/{(f.route or '').strip('/')}")
            elif f.trigger_type == TIMER_TRIGGER:
                lines.append(f"  {f.name}: timerTrigger {f.schedule}")
            else:
                lines.append(f"  {f.name}: queueTrigger {f.queue_name}")
        log.info("Functions:\n%s", "\n".join(lines))

    def stop(self) -> None:
        """Stop everything started, newest first, sharing one `stop_timeout` budget."""
        deadline = time.monotonic() + self.stop_timeout
        while self._running:
            part = self._running.pop()
            try:
                part.stop(max(deadline - time.monotonic(), 0.1))
            except Exception:
                log.exception("stopping %s failed", type(part).__name__)
        self._http = None

    def __enter__(self) -> LocalHost:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
