"""Timer triggers: exact-second firing, run_on_startup, no overlapping invocations, and the schedule monitor
(use_monitor): an occurrence missed while no host ran is made up at start."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from devhost.host import LocalHost
from devhost.schedule_monitor import ScheduleMonitor, ScheduleStatus, host_id


def test_every_second_timer_fires_on_the_second(sample_host: LocalHost, wait_until: Callable[..., Any]) -> None:
    calls = sample_host.app_module.TIMER_CALLS
    already = len(calls)
    wait_until(lambda: len(calls) >= already + 2, timeout=5)
    for call in calls[already:]:
        assert call["at"] % 1.0 < 0.25, "fired late within its second"
        assert call["past_due"] is False
        assert set(call["status"]) == {"Last", "Next", "LastUpdated"}
    first, second = calls[already : already + 2]
    assert round(second["at"] - first["at"]) == 1
    assert second["status"]["Last"] != first["status"]["Last"]


def test_run_on_startup_and_no_overlap_for_a_slow_timer(
    make_app: Callable[..., Path], storage_env: str, wait_until: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="devhost")
    app_dir = make_app("""
        import time
        import azure.functions as func
        app = func.FunctionApp()
        RUNS = []

        @app.timer_trigger(schedule="* * * * * *", arg_name="timer", run_on_startup=True)
        def slow(timer: func.TimerRequest) -> None:
            started = time.time()
            time.sleep(1.5)
            RUNS.append((started, time.time()))
        """)
    began = time.time()
    with LocalHost(app_dir) as host:
        wait_until(lambda: len(host.app_module.RUNS) >= 2, timeout=8)
        runs = list(host.app_module.RUNS)
    assert runs[0][0] - began < 0.5, "run_on_startup fires at start, not at the next second"
    assert runs[1][0] >= runs[0][1], "invocations of one timer never overlap"
    assert runs[1][0] % 1.0 < 0.25, "the next run still starts on a second boundary"
    assert any("skipped the occurrence" in r.getMessage() for r in caplog.records)


MINUTELY = """
    import azure.functions as func
    app = func.FunctionApp()
    CALLS = []

    @app.timer_trigger(schedule="0 * * * * *", arg_name="timer"{extra})
    def minutely(timer: func.TimerRequest) -> None:
        CALLS.append({{"past_due": timer.past_due, "status": timer.schedule_status}})
    """


def _minute(offset: int) -> datetime:
    return datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=offset)


def test_a_monitored_timer_fires_an_occurrence_missed_while_no_host_ran_at_start_past_due(
    make_app: Callable[..., Path], storage_env: str, wait_until: Callable[..., Any]
) -> None:
    app_dir = make_app(MINUTELY.format(extra=""))  # use_monitor unset: the host's default, on for a minutely timer
    monitor = ScheduleMonitor(storage_env, host_id(app_dir))
    # The last host ran the tick two minutes ago and stopped before the next one.
    ran, missed = _minute(-2), _minute(-1)
    monitor.update("minutely", ScheduleStatus(ran, missed, ran))
    began = time.time()
    with LocalHost(app_dir) as host:
        wait_until(lambda: host.app_module.CALLS, timeout=5)
        [call] = host.app_module.CALLS[:1]
        fired = time.time()
        wait_until(lambda: (s := monitor.status("minutely")) is not None and s.last > missed, timeout=5)
    assert call["past_due"] is True and fired - began < 3, "made up at start, not at the next minute"
    assert datetime.fromisoformat(call["status"]["Next"]) == missed  # the occurrence it makes up
    status = monitor.status("minutely")
    assert status is not None and status.next == status.last.replace(second=0, microsecond=0) + timedelta(minutes=1)


def test_a_monitored_timer_records_its_next_occurrence_at_first_start_and_misses_nothing(
    make_app: Callable[..., Path], storage_env: str
) -> None:
    app_dir = make_app(MINUTELY.format(extra=""))
    monitor = ScheduleMonitor(storage_env, host_id(app_dir))
    started = _minute(1)
    with LocalHost(app_dir) as host:
        time.sleep(1)
        assert not [c for c in host.app_module.CALLS if c["past_due"]]
    status = monitor.status("minutely")
    # The next occurrence (or, when a minute turned meanwhile and the timer fired, the one after it).
    assert status is not None and status.next in (started, started + timedelta(minutes=1))


def test_a_timer_with_use_monitor_off_neither_keeps_a_status_nor_makes_up_a_missed_occurrence(
    make_app: Callable[..., Path], storage_env: str
) -> None:
    app_dir = make_app(MINUTELY.format(extra=", use_monitor=False"))
    monitor = ScheduleMonitor(storage_env, host_id(app_dir))
    ran, missed = _minute(-2), _minute(-1)
    monitor.update("minutely", ScheduleStatus(ran, missed, ran))
    with LocalHost(app_dir) as host:
        time.sleep(1.5)
        assert not [c for c in host.app_module.CALLS if c["past_due"]]
    status = monitor.status("minutely")
    assert status is not None and status.next == missed  # untouched
