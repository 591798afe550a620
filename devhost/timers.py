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
  singleton lock). Missed occurrences (a paused process) are not caught up.
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
from devhost.invoker import Invoker
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


def _iso(moment: datetime | None) -> str:
    return (moment or datetime.min.replace(tzinfo=UTC)).isoformat()


class TimerScheduler:
    def __init__(self, functions: Sequence[FunctionInfo], invoker: Invoker, clock: Clock | None = None) -> None:
        self._clock = clock or (lambda: datetime.now(UTC))
        self._invoker = invoker
        now = self._clock()
        self._timers = []
        for function in functions:
            schedule = parse_schedule(function.schedule or "")
            self._timers.append(_Timer(function, schedule, schedule.next_after(now)))
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(self._timers)), thread_name_prefix="devhost-timer")
        self._thread = threading.Thread(target=self._run, name="devhost-timers", daemon=True)

    def start(self) -> None:
        for timer in self._timers:
            if timer.function.run_on_startup:
                self._fire(timer, self._clock(), reason="Timer fired on startup (run_on_startup)")
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

    def _fire(self, timer: _Timer, now: datetime, reason: str) -> None:
        if timer.running is not None and not timer.running.done():
            log.warning("Timer '%s' skipped the occurrence at %s: its previous invocation is still running",
                        timer.function.name, now.isoformat())
            return
        # azure.functions exports only the abstract TimerRequest; this is the worker's concrete one.
        request = TimerRequest(
            past_due=False,
            schedule_status={"Last": _iso(timer.last_fire), "Next": _iso(timer.next_fire), "LastUpdated": _iso(now)},
            schedule={"AdjustForDST": True},
        )
        with contextlib.suppress(RuntimeError):  # the pool refuses work once the host is stopping
            timer.running = self._pool.submit(self._invoke, timer.function, request, reason)

    def _invoke(self, function: FunctionInfo, request: TimerRequest, reason: str) -> None:
        # The invoker logged any failure; a failing timer keeps its schedule.
        with contextlib.suppress(BaseException):
            self._invoker.invoke(function, request, reason)
