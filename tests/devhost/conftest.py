"""Fixtures for the devhost tests: storage settings pointing at the session Azurite, the sample app host,
and a factory for small throw-away apps."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import azure.functions as func
import pytest
from azure.core.exceptions import ResourceExistsError
from azure.storage.queue import QueueClient

from devhost.azurite import Azurite
from devhost.host import LocalHost

SAMPLE_APP = Path(__file__).parent / "sample_app"


@pytest.fixture(scope="module")
def storage_env(azurite: Azurite) -> Iterator[str]:
    """AzureWebJobsStorage set to the test Azurite for the whole module; returns the connection string."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AzureWebJobsStorage", azurite.connection_string)
        yield azurite.connection_string


@pytest.fixture(scope="module")
def sample_host(storage_env: str) -> Iterator[LocalHost]:
    with LocalHost(SAMPLE_APP) as host:
        yield host


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., Path]:
    """Write `function_app.py` (dedented) and optionally host.json into a fresh folder; returns the folder."""

    def make(source: str, host_json: dict[str, Any] | None = None, name: str = "app") -> Path:
        app_dir = tmp_path / name
        app_dir.mkdir()
        (app_dir / "function_app.py").write_text(textwrap.dedent(source))
        if host_json is not None:
            (app_dir / "host.json").write_text(json.dumps(host_json))
        return app_dir

    return make


def wait_until(condition: Callable[[], Any], timeout: float = 10.0, interval: float = 0.05) -> Any:
    """Poll `condition` until it returns something truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


def declared_functions(app_dir: Path, script: str = "function_app.py") -> list[dict[str, Any]]:
    """What `app.get_functions()` declares, read from the function.json form the worker sends the host.

    The module is loaded here under a private name, independently of the host's indexing.
    """
    spec = importlib.util.spec_from_file_location("declared_function_app", app_dir / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    app = next(v for v in vars(module).values() if isinstance(v, func.FunctionRegister))
    result = []
    for function in app.get_functions():
        trigger = function.get_trigger().get_dict_repr()
        entry: dict[str, Any] = {"name": function.get_function_name(), "trigger": trigger["type"]}
        if trigger["type"] == "httpTrigger":
            methods = trigger.get("methods")
            entry |= {"route": trigger["route"], "methods": None if methods is None else tuple(str(m) for m in methods)}
        elif trigger["type"] == "timerTrigger":
            entry |= {
                "schedule": trigger["schedule"],
                "run_on_startup": bool(trigger.get("runOnStartup")),
                "use_monitor": trigger.get("useMonitor"),
            }
        else:
            entry |= {"queue_name": trigger["queueName"], "connection": trigger["connection"]}
        result.append(entry)
    return result


@pytest.fixture(name="declared")
def declared_fixture() -> Callable[..., list[dict[str, Any]]]:
    return declared_functions


@pytest.fixture(name="wait_until")
def wait_until_fixture() -> Callable[..., Any]:
    return wait_until


@pytest.fixture(scope="module")
def queue_factory(storage_env: str) -> Callable[[str], QueueClient]:
    """Raw-text queue clients (no SDK encoding policy), created if missing."""

    def make(name: str) -> QueueClient:
        client = QueueClient.from_connection_string(storage_env, name)
        with contextlib.suppress(ResourceExistsError):
            client.create_queue()
        return client

    return make
