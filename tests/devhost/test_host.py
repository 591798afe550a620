"""LocalHost lifecycle: start failures leave nothing behind, stop is quick and complete."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from devhost.host import LocalHost
from devhost.indexing import IndexingError
from devhost.settings import SettingsError

SAMPLE_APP = Path(__file__).parent / "sample_app"


def devhost_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("devhost")}


def test_lifecycle_threads_and_port(storage_env: str) -> None:
    host = LocalHost(SAMPLE_APP)
    with pytest.raises(RuntimeError, match="not started"):
        _ = host.functions
    host.start()
    port = host.port
    assert requests.get(f"{host.base_url}/text", timeout=10).status_code == 200
    assert devhost_threads()
    began = time.monotonic()
    host.stop()
    assert time.monotonic() - began < 1.0
    assert devhost_threads() == set()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/api/text", timeout=2)
    host.stop()  # idempotent


@pytest.mark.parametrize(
    ("decorator", "error", "message"),
    [
        (
            '@app.queue_trigger(arg_name="x", queue_name="q", connection="NoSuchSetting")',
            SettingsError,
            "NoSuchSetting",
        ),
        ('@app.timer_trigger(arg_name="x", schedule="every minute")', ValueError, "not a valid NCRONTAB"),
        (
            '@app.queue_trigger(arg_name="x", queue_name="%NoSuchQueueSetting%", connection="AzureWebJobsStorage")',
            SettingsError,
            "NoSuchQueueSetting",
        ),
        (
            '@app.event_hub_message_trigger(arg_name="x", event_hub_name="h", connection="c")',
            IndexingError,
            "eventHubTrigger",
        ),
    ],
)
def test_start_failures_are_loud_and_leave_nothing_running(
    make_app: Callable[..., Path], storage_env: str, decorator: str, error: type[Exception], message: str
) -> None:
    app_dir = make_app(f"""
        import azure.functions as func
        app = func.FunctionApp()

        @app.route(route="ok")
        def ok(req: func.HttpRequest) -> func.HttpResponse:
            return func.HttpResponse("ok")

        {decorator}
        def bad(x) -> None: ...
        """)
    with pytest.raises(error, match=message):
        LocalHost(app_dir).start()
    assert devhost_threads() == set()


def test_port_in_use_fails_start(storage_env: str) -> None:
    with LocalHost(SAMPLE_APP) as first, pytest.raises(OSError):
        LocalHost(SAMPLE_APP, port=first.port).start()
    assert devhost_threads() == set()


def test_stop_cancels_a_running_async_function(make_app: Callable[..., Path], storage_env: str) -> None:
    app_dir = make_app("""
        import asyncio
        import azure.functions as func
        app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
        STARTED = []

        @app.route(route="sleep")
        async def sleep(req: func.HttpRequest) -> func.HttpResponse:
            STARTED.append(True)
            await asyncio.sleep(30)
            return func.HttpResponse("done")
        """)
    host = LocalHost(app_dir, stop_timeout=1.0).start()
    result: list[int] = []
    caller = threading.Thread(
        target=lambda: result.append(requests.get(f"{host.base_url}/sleep", timeout=10).status_code)
    )
    caller.start()
    while not host.app_module.STARTED:
        time.sleep(0.01)
    began = time.monotonic()
    host.stop()
    assert time.monotonic() - began < 1.5
    caller.join(5)
    assert result == [500], "the cancelled invocation fails instead of hanging its caller"


def test_a_function_disabled_by_its_app_setting_is_not_triggered(
    make_app: Callable[..., Path], storage_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`AzureWebJobs.<name>.Disabled=true`, as on the Functions host: its timer never fires, its route is gone."""
    app_dir = make_app("""
        import azure.functions as func
        app = func.FunctionApp()
        TICKS = []

        @app.timer_trigger(schedule="* * * * * *", arg_name="timer", run_on_startup=True)
        def ticker(timer: func.TimerRequest) -> None:
            TICKS.append(True)

        @app.route(route="hidden", auth_level=func.AuthLevel.ANONYMOUS)
        def hidden(req: func.HttpRequest) -> func.HttpResponse:
            return func.HttpResponse("here")

        @app.route(route="shown", auth_level=func.AuthLevel.ANONYMOUS)
        def shown(req: func.HttpRequest) -> func.HttpResponse:
            return func.HttpResponse("here")
        """)
    monkeypatch.setenv("AzureWebJobs.ticker.Disabled", "true")
    monkeypatch.setenv("AZUREWEBJOBS.HIDDEN.DISABLED", "True")  # setting names in any case, as on the host
    with LocalHost(app_dir) as host:
        assert requests.get(f"{host.base_url}/shown", timeout=10).status_code == 200
        assert requests.get(f"{host.base_url}/hidden", timeout=10).status_code == 404
        time.sleep(1.5)  # a second's timer would have fired at least once by now
        assert host.app_module.TICKS == []
