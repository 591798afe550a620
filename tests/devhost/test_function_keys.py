"""Functions keys under the local host, as the Functions host checks them in Azure: `function` routes take a
function or the master key (x-functions-key header, else ?code=), `admin` routes the master key, anonymous
routes nothing; a refusal is 401 with an empty body and runs nothing; keys come from the settings or are
generated and printed once; keys that cannot be checked stop the host from starting."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from devhost.azurite import free_port
from devhost.host import LocalHost
from devhost.keys import FUNCTION_KEY_SETTING, MASTER_KEY_SETTING, KeyConfigurationError

ROOT = Path(__file__).resolve().parents[2]

APP = """
    import azure.functions as func
    app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION)
    CALLS = []

    @app.route(route="guarded", methods=["GET"])
    def guarded(req: func.HttpRequest) -> func.HttpResponse:
        CALLS.append(req.url)
        return func.HttpResponse("guarded")

    @app.route(route="open", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
    def open_route(req: func.HttpRequest) -> func.HttpResponse:
        return func.HttpResponse("open")
"""


def test_function_routes_need_a_key_and_anonymous_routes_do_not(
    make_app: Callable[..., Path], storage_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FUNCTION_KEY_SETTING, "function-key-from-the-settings")
    monkeypatch.setenv(MASTER_KEY_SETTING, "master-key-from-the-settings")
    with LocalHost(make_app(APP)) as host:
        url = f"{host.base_url}/guarded"
        for refused in (
            requests.get(url, timeout=10),
            requests.get(url, headers={"x-functions-key": "wrong-key-of-enough-length"}, timeout=10),
            requests.get(url, params={"code": "wrong-key-of-enough-length"}, timeout=10),
            requests.get(url, headers={"x-functions-key": ""}, timeout=10),
            # the header wins over ?code=, as in Azure, even when the header's key is the wrong one
            requests.get(
                url, headers={"x-functions-key": "nope"}, params={"code": "function-key-from-the-settings"}, timeout=10
            ),
        ):
            assert (refused.status_code, refused.content) == (401, b"")
            assert "Content-Type" not in refused.headers
        assert host.app_module.CALLS == []  # refused before the function ran
        for key in ("function-key-from-the-settings", "master-key-from-the-settings"):
            assert requests.get(url, headers={"X-Functions-Key": key}, timeout=10).text == "guarded"
            assert requests.get(url, params={"code": key}, timeout=10).text == "guarded"
        assert len(host.app_module.CALLS) == 4
        assert requests.get(f"{host.base_url}/open", timeout=10).text == "open"
        assert requests.get(f"{host.base_url}/open", params={"code": "wrong"}, timeout=10).text == "open"
        assert requests.get(f"{host.base_url}/missing", timeout=10).status_code == 404  # routing first, as in Azure


def test_a_key_not_set_is_generated_and_printed_once(
    make_app: Callable[..., Path], storage_env: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(FUNCTION_KEY_SETTING, raising=False)
    monkeypatch.delenv(MASTER_KEY_SETTING, raising=False)
    caplog.set_level(logging.INFO, logger="devhost")
    with LocalHost(make_app(APP)) as host:
        assert host.keys is not None and len(host.keys.function_key) >= 40
        printed = [r.getMessage() for r in caplog.records if host.keys.function_key in r.getMessage()]
        assert len(printed) == 1 and FUNCTION_KEY_SETTING in printed[0]
        assert not any(host.keys.master_key in r.getMessage() for r in caplog.records)  # no admin route here
        url = f"{host.base_url}/guarded"
        assert requests.get(url, timeout=10).status_code == 401
        assert requests.get(url, headers={"x-functions-key": host.keys.function_key}, timeout=10).status_code == 200
    with LocalHost(make_app(APP, name="again")) as other:
        assert other.keys is not None and other.keys.function_key != host.keys.function_key


def test_an_app_without_keyed_routes_gets_no_keys(make_app: Callable[..., Path], storage_env: str) -> None:
    app_dir = make_app("""
        import azure.functions as func
        app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)

        @app.route(route="hello")
        def hello(req: func.HttpRequest) -> func.HttpResponse:
            return func.HttpResponse("hi")
    """)
    with LocalHost(app_dir) as host:
        assert host.keys is None
        assert requests.get(f"{host.base_url}/hello", timeout=10).text == "hi"


def test_a_key_too_short_to_protect_anything_stops_the_host_before_it_serves(
    make_app: Callable[..., Path], storage_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FUNCTION_KEY_SETTING, "short")
    host = LocalHost(make_app(APP))
    with pytest.raises(KeyConfigurationError, match=FUNCTION_KEY_SETTING):
        host.start()
    with pytest.raises(RuntimeError, match="not started"):
        print(host.port)  # nothing listens


def test_the_command_refuses_to_start_in_one_line(make_app: Callable[..., Path], storage_env: str) -> None:
    app_dir = make_app(APP)
    env = {
        "PATH": "/usr/bin:/bin",
        "AzureWebJobsStorage": storage_env,
        FUNCTION_KEY_SETTING: "short",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-m", "devhost", "--app-dir", str(app_dir), "--port", str(free_port())],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if "devhost" in line and "ERROR" in line]
    assert len(lines) == 1 and FUNCTION_KEY_SETTING in lines[0], done.stderr
    assert "Traceback" not in done.stderr
