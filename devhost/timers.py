"""Timer triggers: NCRONTAB schedules in UTC, fired at the exact second, one invocation at a time.

Contracts:
- `parse_schedule(text)` accepts 6-field NCRONTAB `{second} {minute} {hour} {day} {month} {day-of-week}`
  or 5-field CRON (second 0); the host's TimeSpan form (App Service plans only) is refused. Day-of-month
  and day-of-week are combined with AND, as NCrontab does (classic cron uses OR). `%Setting%` references
  are expanded first.
- `TimerScheduler` fires each timer at its next occurrence with a `func.TimerRequest` (past_due False;
  schedule_status Last/Next/LastUpdated as ISO text), plus once at start when run_on_startup is set. The
  scheduling thread never runs user code: invocations go to a pool, and an occurrence that comes while
  the previous invocation of the same function still runs is skipped with a warning (the host's
  singleton lock). Missed occurrences (a paused process) are not caught up while the host runs.
- With a `ScheduleMonitor` (schedule_monitor.py), a monitored timer (use_monitor, the host's default) keeps
  its schedule status in storage, written after each invocation: at start, an occurrence missed while no
  host ran (or one the last host died in) fires at once with past_due True, instead of run_on_startup.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime

from azure.functions.timer import TimerRequest
from croniter import croniter

from devhost.indexing import FunctionInfo
from devhost.invoker import Invokes
from devhost.schedule_monitor import ScheduleMonitor, ScheduleStatus, monitored
from devhost.settings import resolve_references

log = logging.getLogger(__name__)
Clock = Callable[[], datetime]


@dataclass(frozen=True)
class CronSchedule:
    expression: str

    def next_after(self, moment: datetime) -> datetime:
        """The first occurrence strictly after `moment` (aware, UTC)."""
        has_seconds = len(self.expression.split()) == 6
        # second_at_beginning: NCRONTAB puts seconds first, croniter's default puts them last.
        cron = croniter(self.expression, moment, second_at_beginning=has_seconds, day_or=False)
        return cron.get_next(datetime)


def parse_schedule(text: str) -> CronSchedule:
    expression = resolve_references(text).strip()
    fields = len(expression.split())
    if fields not in (5, 6) or not croniter.is_valid(expression, second_at_beginning=fields == 6):
        raise ValueError(f"not a valid NCRONTAB schedule (6 fields, seconds first): {text!r}")
    return CronSchedule(expression)


@dataclass
class _Timer:
    function: FunctionInfo
    schedule: CronSchedule
    next_fire: datetime
    last_fire: datetime | None = None
    running: Future[None] | None = None
    monitored: bool = False


def _iso(moment: datetime | None) -> str:
    return (moment or datetime.min.replace(tzinfo=UTC)).isoformat()


class TimerScheduler:
    def __init__(
        self,
        functions: Sequence[FunctionInfo],
        invoker: Invokes,
        clock: Clock | None = None,
        monitor: ScheduleMonitor | None = None,
    ) -> None:
        self._clock = clock or (lambda: datetime.now(UTC))
        self._invoker = invoker
        self._monitor = monitor
        now = self._clock()
        self._timers = []
        for function in functions:
            schedule = parse_schedule(function.schedule or "")
            watched = monitor is not None and monitored(
                function.use_monitor, schedule.expression, schedule.next_after, now
            )
            self._timers.append(_Timer(function, schedule, schedule.next_after(now), monitored=watched))
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(self._timers)), thread_name_prefix="devhost-timer")
        self._thread = threading.Thread(target=self._run, name="devhost-timers", daemon=True)

    def start(self) -> None:
        for timer in self._timers:
            now = self._clock()
            missed = (
                self._monitor.past_due(timer.function.name, timer.schedule.next_after, now)
                if self._monitor is not None and timer.monitored
                else None
            )
            if missed is not None:
                log.info(
                    "Timer '%s' is past due: its occurrence at %s was missed",
                    timer.function.name,
                    missed.next.isoformat(),
                )
                self._fire(
                    timer,
                    now,
                    reason="Timer fired past due (its schedule status missed an occurrence)",
                    past_due=missed,
                )
            elif timer.function.run_on_startup:
                self._fire(timer, now, reason="Timer fired on startup (run_on_startup)")
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop firing; wait up to `timeout` for running invocations, which are then left to finish alone."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._pool.shutdown(wait=False, cancel_futures=True)
        running = [t.running for t in self._timers if t.running is not None]
        wait(running, timeout=timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            now = self._clock()
            for timer in self._timers:
                if timer.next_fire <= now:
                    scheduled = timer.next_fire
                    following = timer.schedule.next_after(scheduled)
                    timer.next_fire = following if following > now else timer.schedule.next_after(now)
                    self._fire(timer, now, reason=f"Timer fired at {now.isoformat()}")
                    timer.last_fire = scheduled
            if not self._timers:
                self._stop.wait()
                return
            earliest = min(t.next_fire for t in self._timers)
            # Re-check at least once a minute so a wall-clock jump cannot stall timers for long.
            self._stop.wait(min(max((earliest - self._clock()).total_seconds(), 0.0), 60.0))

    def _fire(self, timer: _Timer, now: datetime, reason: str, past_due: ScheduleStatus | None = None) -> None:
        if timer.running is not None and not timer.running.done():
            log.warning(
                "Timer '%s' skipped the occurrence at %s: its previous invocation is still running",
                timer.function.name,
                now.isoformat(),
            )
            return
        status = (
            past_due.as_request_status()
            if past_due is not None
            else {"Last": _iso(timer.last_fire), "Next": _iso(timer.next_fire), "LastUpdated": _iso(now)}
        )
        # azure.functions exports only the abstract TimerRequest; this is the worker's concrete one.
        request = TimerRequest(past_due=past_due is not None, schedule_status=status, schedule={"AdjustForDST": True})
        with contextlib.suppress(RuntimeError):  # the pool refuses work once the host is stopping
            timer.running = self._pool.submit(self._invoke, timer, request, reason, now)

    def _invoke(self, timer: _Timer, request: TimerRequest, reason: str, fired: datetime) -> None:
        # The invoker logged any failure; a failing timer keeps its schedule.
        with contextlib.suppress(BaseException):
            self._invoker.invoke(timer.function, request, reason)
        if self._monitor is not None and timer.monitored:
            # Written once the invocation ended (as the host does): a host that dies in it runs it again at start.
            self._monitor.update(timer.function.name, ScheduleStatus(fired, timer.schedule.next_after(fired), fired))
