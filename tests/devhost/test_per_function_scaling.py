"""DEVHOST_PER_FUNCTION_SCALING: with it on, the local host runs its HTTP functions in worker processes apart from
its queue and timer functions (FUNCTIONS_WORKER_PROCESS_COUNT of each), as Flex Consumption scales them; stop()
ends both groups; a bad value warns once and runs as before; `python -m devhost --per-function-scaling` turns it on."""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.storage.queue import QueueClient

from devhost.azurite import Azurite, free_port
from devhost.host import LocalHost
from devhost.per_function_scaling import PER_FUNCTION_SCALING_SETTING, per_function_scaling

HOST_JSON = {
    "version": "2.0",
    "extensions": {"http": {"routePrefix": "api"}, "queues": {"batchSize": 8, "maxPollingInterval": "00:00:00.2"}},
}
TIMER_WAIT = 15.0  # two ticks of a timer that fires every second, with room for a busy machine
START_WAIT = 60.0  # a host and its two worker processes import the app on a loaded machine
REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_APP = Path(__file__).parent / "sample_app"

APP = """
import json, os, time
from pathlib import Path
import azure.functions as func

app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)

def record(**fields):
    with Path(os.environ["SCALING_TEST_RECORD"]).open("a") as out:
        out.write(json.dumps({"pid": os.getpid(), **fields}) + "\\n")

@app.queue_trigger(arg_name="msg", queue_name="%WORK_QUEUE%", connection="AzureWebJobsStorage")
def work(msg: func.QueueMessage) -> None:
    body = msg.get_body().decode()
    record(function="work", body=body)
    if body.startswith("hang"):
        time.sleep(60)

@app.route(route="pid", methods=["GET"])
def pid(req: func.HttpRequest) -> func.HttpResponse:
    if req.params.get("hang"):
        record(function="pid", body="hang")
        time.sleep(60)
    return func.HttpResponse(str(os.getpid()))

@app.timer_trigger(arg_name="timer", schedule="* * * * * *", use_monitor=False)
def tick(timer: func.TimerRequest) -> None:
    record(function="tick")
"""


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class App:
    def __init__(self, host: LocalHost, queue: QueueClient, record: Path) -> None:
        self.host, self.queue, self.record = host, queue, record

    def of(self, function: str, body: str | None = None) -> list[dict[str, Any]]:
        return [r for r in records(self.record) if r["function"] == function and body in (None, r.get("body"))]

    def send(self, body: str) -> None:
        self.queue.send_message(base64.b64encode(body.encode()).decode("ascii"))

    def http_pid(self) -> int:
        with urllib.request.urlopen(f"{self.host.base_url}/pid", timeout=10) as response:
            return int(response.read())


def app_in(
    folder: Path, queue_factory: Callable[[str], QueueClient], patch: pytest.MonkeyPatch, scaling: str, count: str
) -> App:
    """A host of APP in `folder` with the two settings (the caller starts it and undoes `patch`)."""
    folder.mkdir()
    (folder / "function_app.py").write_text(APP)
    (folder / "host.json").write_text(json.dumps(HOST_JSON))
    queue_name = f"devhost-scaling-{uuid.uuid4().hex[:8]}"
    patch.setenv("WORK_QUEUE", queue_name)
    patch.setenv("SCALING_TEST_RECORD", str(folder / "record.jsonl"))
    patch.setenv(PER_FUNCTION_SCALING_SETTING, scaling)
    patch.setenv("FUNCTIONS_WORKER_PROCESS_COUNT", count)
    return App(LocalHost(folder), queue_factory(queue_name), folder / "record.jsonl")


@pytest.fixture(scope="module")
def scaled(
    tmp_path_factory: pytest.TempPathFactory, storage_env: str, queue_factory: Callable[[str], QueueClient]
) -> Iterator[App]:
    """Per-function scaling with two worker processes in each group."""
    with pytest.MonkeyPatch.context() as patch:
        app = app_in(tmp_path_factory.mktemp("scaling") / "app", queue_factory, patch, "1", "2")
        with app.host:
            yield app


@pytest.fixture
def own(
    tmp_path: Path, storage_env: str, queue_factory: Callable[[str], QueueClient]
) -> Iterator[Callable[[str, str], App]]:
    """A host of its own with the given setting and FUNCTIONS_WORKER_PROCESS_COUNT (started by the test)."""
    made: list[App] = []
    with pytest.MonkeyPatch.context() as patch:

        def make(scaling: str, count: str) -> App:
            made.append(app_in(tmp_path / f"app{len(made)}", queue_factory, patch, scaling, count))
            return made[-1]

        yield make
        for app in made:
            app.host.stop()


def test_http_functions_run_in_worker_processes_apart_from_the_queue_and_timer_functions(
    scaled: App, wait_until: Callable[..., Any]
) -> None:
    workers = set(scaled.host.worker_pids)
    assert len(workers) == 4 and os.getpid() not in workers
    # Round robin within the HTTP group: four requests reach both of its processes, and only those.
    http = {scaled.http_pid() for _ in range(4)}
    bodies = [f"spread-{i}" for i in range(8)]
    for body in bodies:
        scaled.send(body)
    works = wait_until(lambda: len(found := scaled.of("work")) == 8 and found)
    ticks = wait_until(lambda: len(found := scaled.of("tick")) >= 2 and found, timeout=TIMER_WAIT)
    queue, timer = {r["pid"] for r in works}, {r["pid"] for r in ticks}
    events = queue | timer
    assert len(http) == 2 and len(events) == 2
    assert not http & events
    assert http | events == workers


def test_stop_ends_both_groups_within_its_timeout_even_with_a_function_running_in_each(
    own: Callable[[str, str], App], wait_until: Callable[..., Any]
) -> None:
    app = own("true", "1")
    app.host.start()
    pids = app.host.worker_pids
    assert len(pids) == 2
    request = threading.Thread(target=_answer_or_error, args=(f"{app.host.base_url}/pid?hang=1",), daemon=True)
    request.start()
    app.send("hang-at-stop")
    wait_until(lambda: app.of("pid", "hang") and app.of("work", "hang-at-stop"))
    started = time.monotonic()
    app.host.stop()
    assert time.monotonic() - started < app.host.stop_timeout + 1.0
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists()
    request.join(10)


def _answer_or_error(url: str) -> None:
    # The host stops under it: what the test watches is the worker processes, not this answer.
    with contextlib.suppress(urllib.error.URLError, OSError):
        urllib.request.urlopen(url, timeout=10).close()


def test_a_bad_value_warns_once_and_runs_the_functions_as_before(
    own: Callable[[str, str], App], caplog: pytest.LogCaptureFixture, wait_until: Callable[..., Any]
) -> None:
    caplog.set_level(logging.WARNING, logger="devhost")
    app = own("maybe", "")
    app.host.start()
    warned = [r for r in caplog.records if PER_FUNCTION_SCALING_SETTING in r.getMessage()]
    assert len(warned) == 1 and warned[0].levelno == logging.WARNING
    assert app.host.worker_pids == ()
    assert app.http_pid() == os.getpid()
    app.send("in-process")
    assert wait_until(lambda: app.of("work", "in-process"))[0]["pid"] == os.getpid()


def test_the_setting_is_1_or_true_else_off(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="devhost")
    for on in ("1", "true", " TRUE ", "True"):
        assert per_function_scaling({PER_FUNCTION_SCALING_SETTING: on}) is True
    for off in ("", " ", "0", "false", "FALSE"):
        assert per_function_scaling({PER_FUNCTION_SCALING_SETTING: off}) is False
    assert per_function_scaling({}) is False
    assert not caplog.records
    for bad in ("yes", "2", "on"):
        assert per_function_scaling({PER_FUNCTION_SCALING_SETTING: bad}) is False
    assert len(caplog.records) == 3


def test_the_command_line_flag_turns_it_on(azurite: Azurite, tmp_path: Path) -> None:
    app_dir = tmp_path / "app"
    shutil.copytree(SAMPLE_APP, app_dir, ignore=shutil.ignore_patterns("__pycache__"))
    port = free_port()
    env = {
        **os.environ,
        "AzureWebJobsStorage": azurite.connection_string,
        "FUNCTIONS_WORKER_PROCESS_COUNT": "1",
        PER_FUNCTION_SCALING_SETTING: "0",  # the flag wins over the environment
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "devhost", "--app-dir", str(app_dir), "--port", str(port), "--per-function-scaling"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], START_WAIT)
        assert ready, "no base URL on stdout"
        assert process.stdout.readline().strip() == f"http://127.0.0.1:{port}/api"
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "1 worker process runs the HTTP functions" in stderr
    assert "1 worker process runs the queue and timer functions" in stderr
