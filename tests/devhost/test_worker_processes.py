"""FUNCTIONS_WORKER_PROCESS_COUNT: with 2 the local host runs every invocation (queue, HTTP, timer) in one of two
worker processes, not its own; the functions see the same objects; a failure leaves its message to reappear; a
killed worker is replaced; stop() ends the workers; an invalid count warns and runs the app in-process."""

from __future__ import annotations

import base64
import json
import logging
import os
import signal
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.storage.queue import QueueClient

from devhost.host import LocalHost
from devhost.workers import worker_process_count

# Visibility 1 s: a failed message reappears about 1 s later; polling every 0.2 s at most.
HOST_JSON = {
    "version": "2.0",
    "extensions": {
        "http": {"routePrefix": "api"},
        "queues": {"batchSize": 8, "maxPollingInterval": "00:00:00.2", "visibilityTimeout": "00:00:01"},
    },
}
REAPPEAR_WAIT = 15.0  # well beyond the 1 s visibility and 0.2 s polling
RESTART_WAIT = 60.0  # a new worker process imports the app (a second or two; more on a loaded machine)

APP = """
import json, os, time
from pathlib import Path
import azure.functions as func

app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)

def record(**fields):
    with Path(os.environ["WORKER_TEST_RECORD"]).open("a") as out:
        out.write(json.dumps({"pid": os.getpid(), **fields}) + "\\n")

@app.queue_trigger(arg_name="msg", queue_name="%WORK_QUEUE%", connection="AzureWebJobsStorage")
def work(msg: func.QueueMessage) -> None:
    body = msg.get_body().decode()
    record(function="work", body=body, id=msg.id, dequeue_count=msg.dequeue_count)
    if body.startswith("raise"):
        raise ValueError("this message is refused")
    if body.startswith("hang") and msg.dequeue_count == 1:
        time.sleep(60)

@app.route(route="echo/{item}", methods=["POST"])
def echo(req: func.HttpRequest) -> func.HttpResponse:
    seen = {
        "method": req.method,
        "url": req.url,
        "item": req.route_params["item"],
        "params": dict(req.params),
        "header": req.headers.get("x-test"),
        "body": req.get_body().decode(),
    }
    response = func.HttpResponse(
        json.dumps(seen), status_code=201, headers={"X-Worker-Pid": str(os.getpid())}, mimetype="application/json"
    )
    response.headers.add_header("X-Twice", "a")
    response.headers.add_header("X-Twice", "b")
    return response

@app.route(route="fail", methods=["GET"])
def fail(req: func.HttpRequest) -> func.HttpResponse:
    raise RuntimeError("boom")

@app.timer_trigger(arg_name="timer", schedule="* * * * * *", use_monitor=False)
def tick(timer: func.TimerRequest) -> None:
    record(function="tick", past_due=timer.past_due)
"""


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode("ascii")


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class Running:
    def __init__(self, host: LocalHost, queue: QueueClient, record: Path) -> None:
        self.host, self.queue, self.record = host, queue, record

    def of(self, body: str) -> list[dict[str, Any]]:
        return [r for r in records(self.record) if r.get("body") == body]

    def post_echo(self) -> tuple[int, Any, dict[str, Any]]:
        request = urllib.request.Request(
            f"{self.host.base_url}/echo/abc%20d?x=1&x=2&y=3",
            data=b"hello",
            method="POST",
            headers={"X-Test": "yes"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, json.loads(response.read())


def running(
    folder: Path, queue_factory: Callable[[str], QueueClient], processes: str, patch: pytest.MonkeyPatch
) -> Running:
    """Environment for a host of APP in `folder` (the caller starts it and undoes `patch`)."""
    folder.mkdir()
    (folder / "function_app.py").write_text(APP)
    (folder / "host.json").write_text(json.dumps(HOST_JSON))
    queue_name = f"devhost-workers-{uuid.uuid4().hex[:8]}"
    record = folder / "record.jsonl"
    patch.setenv("WORK_QUEUE", queue_name)
    patch.setenv("WORKER_TEST_RECORD", str(record))
    patch.setenv("FUNCTIONS_WORKER_PROCESS_COUNT", processes)
    return Running(LocalHost(folder), queue_factory(queue_name), record)


@pytest.fixture(scope="module")
def two(
    tmp_path_factory: pytest.TempPathFactory, storage_env: str, queue_factory: Callable[[str], QueueClient]
) -> Iterator[Running]:
    with pytest.MonkeyPatch.context() as patch:
        app = running(tmp_path_factory.mktemp("workers") / "app", queue_factory, "2", patch)
        with app.host:
            yield app


@pytest.fixture
def own(
    tmp_path: Path, storage_env: str, queue_factory: Callable[[str], QueueClient]
) -> Iterator[Callable[[str], Running]]:
    """A host of its own, with the given FUNCTIONS_WORKER_PROCESS_COUNT (started by the test; stopped after)."""
    started: list[Running] = []
    with pytest.MonkeyPatch.context() as patch:

        def make(processes: str) -> Running:
            app = running(tmp_path / f"app{len(started)}", queue_factory, processes, patch)
            started.append(app)
            return app

        yield make
        for app in started:
            app.host.stop()


def test_queue_invocations_run_in_two_worker_processes_not_the_hosts(
    two: Running, wait_until: Callable[..., Any]
) -> None:
    bodies = [f"spread-{i}" for i in range(8)]
    for body in bodies:
        two.queue.send_message(b64(body))
    done = wait_until(lambda: (found := [r for b in bodies for r in two.of(b)]) and len(found) == 8 and found)
    assert len(two.host.worker_pids) == 2
    assert {r["pid"] for r in done} == set(two.host.worker_pids)
    assert os.getpid() not in two.host.worker_pids


def test_http_requests_answer_through_the_workers_intact(two: Running) -> None:
    answers = [two.post_echo() for _ in range(4)]
    for status, headers, seen in answers:
        assert status == 201
        assert headers["Content-Type"] == "application/json"
        assert headers.get_all("X-Twice") == ["a", "b"]
        assert seen == {
            "method": "POST",
            "url": f"{two.host.base_url}/echo/abc%20d?x=1&x=2&y=3",
            "item": "abc d",
            "params": {"x": "1,2", "y": "3"},
            "header": "yes",
            "body": "hello",
        }
    # Round robin: four requests in a row reach both workers.
    assert {int(headers["X-Worker-Pid"]) for _, headers, _ in answers} == set(two.host.worker_pids)
    with pytest.raises(urllib.error.HTTPError) as failed:
        urllib.request.urlopen(f"{two.host.base_url}/fail", timeout=10)
    assert failed.value.code == 500


def test_a_timer_fires_in_a_worker(two: Running, wait_until: Callable[..., Any]) -> None:
    since = len(records(two.record))
    # The timer fires every second: two ticks; the wait leaves room for a busy machine (15 periods).
    ticks = wait_until(
        lambda: len(found := [r for r in records(two.record)[since:] if r["function"] == "tick"]) >= 2 and found,
        timeout=15,
    )
    assert all(t["pid"] in two.host.worker_pids and t["past_due"] is False for t in ticks)


def test_a_function_that_raises_leaves_its_message_to_reappear(two: Running, wait_until: Callable[..., Any]) -> None:
    body = f"raise-{uuid.uuid4().hex[:6]}"
    two.queue.send_message(b64(body))
    tries = wait_until(lambda: len(found := two.of(body)) >= 2 and found, timeout=REAPPEAR_WAIT)
    assert [t["dequeue_count"] for t in tries[:2]] == [1, 2]
    assert tries[0]["id"] == tries[1]["id"]
    assert {t["pid"] for t in tries} <= set(two.host.worker_pids)


def test_an_invalid_count_warns_once_and_runs_in_the_hosts_process(
    own: Callable[[str], Running], caplog: pytest.LogCaptureFixture, wait_until: Callable[..., Any]
) -> None:
    caplog.set_level(logging.WARNING, logger="devhost")
    app = own("11")
    app.host.start()
    warned = [r for r in caplog.records if "FUNCTIONS_WORKER_PROCESS_COUNT" in r.getMessage()]
    assert len(warned) == 1 and warned[0].levelno == logging.WARNING
    assert app.host.worker_pids == ()
    app.queue.send_message(b64("in-process"))
    assert wait_until(lambda: app.of("in-process"))[0]["pid"] == os.getpid()


def test_the_count_is_1_to_10_else_1() -> None:
    assert worker_process_count({}) == 1
    assert worker_process_count({"FUNCTIONS_WORKER_PROCESS_COUNT": "10"}) == 10
    assert worker_process_count({"FUNCTIONS_WORKER_PROCESS_COUNT": " 3 "}) == 3
    for invalid in ("0", "11", "-2", "two", "1.5"):
        assert worker_process_count({"FUNCTIONS_WORKER_PROCESS_COUNT": invalid}) == 1


def test_a_killed_worker_fails_its_invocation_and_is_replaced(
    own: Callable[[str], Running], caplog: pytest.LogCaptureFixture, wait_until: Callable[..., Any]
) -> None:
    caplog.set_level(logging.INFO, logger="devhost.workers")
    app = own("2")
    app.host.start()
    assert any("2 worker processes run the functions" in r.getMessage() for r in caplog.records)
    app.queue.send_message(b64("hang-once"))
    victim = wait_until(lambda: app.of("hang-once"))[0]["pid"]
    os.kill(victim, signal.SIGKILL)
    pids = wait_until(lambda: len(p := app.host.worker_pids) == 2 and victim not in p and p, timeout=RESTART_WAIT)
    assert any("exited" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
    # Its message reappears after the visibility timeout and runs elsewhere.
    again = wait_until(lambda: len(found := app.of("hang-once")) >= 2 and found[1], timeout=REAPPEAR_WAIT)
    assert again["dequeue_count"] == 2 and again["pid"] in pids
    # The new worker takes its turn.
    answered = {int(headers["X-Worker-Pid"]) for _, headers, _ in (app.post_echo() for _ in range(4))}
    assert answered == set(pids)


def test_stop_ends_the_workers_within_its_timeout_even_with_a_function_running(
    own: Callable[[str], Running], wait_until: Callable[..., Any]
) -> None:
    app = own("2")
    app.host.start()
    pids = app.host.worker_pids
    app.queue.send_message(b64("hang-at-stop"))
    wait_until(lambda: app.of("hang-at-stop"))
    started = time.monotonic()
    app.host.stop()
    assert time.monotonic() - started < app.host.stop_timeout + 1.0
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists()
