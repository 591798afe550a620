"""Timer triggers: exact-second firing, run_on_startup, and no overlapping invocations."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devhost.host import LocalHost


def test_every_second_timer_fires_on_the_second(sample_host: LocalHost, wait_until: Callable[..., Any]) -> None:
    calls = sample_host.app_module.TIMER_CALLS
    already = len(calls)
    wait_until(lambda: len(calls) >= already + 2, timeout=5)
    for call in calls[already:]:
        assert call["at"] % 1.0 < 0.25, "fired late within its second"
        assert call["past_due"] is False
        assert set(call["status"]) == {"Last", "Next", "LastUpdated"}
    first, second = calls[already:already + 2]
    assert round(second["at"] - first["at"]) == 1
    assert second["status"]["Last"] != first["status"]["Last"]


def test_run_on_startup_and_no_overlap_for_a_slow_timer(make_app: Callable[..., Path], storage_env: str,
                                                        wait_until: Callable[..., Any],
                                                        caplog: pytest.LogCaptureFixture) -> None:
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
