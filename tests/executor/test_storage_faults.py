"""Storage faults lose nothing and run nothing twice: the executor's storage goes through the test suite's
fault-injecting TCP proxy (dropped answers after the request was applied, resets, outages).

The queue trigger is played here by a loop with its own, clean storage link (the host's queue handling
is the local host's business, tested in tests/devhost): it hands each message to the executor with its
message id, deletes it on success and makes it visible again one second after a failure (or as the host does).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from devhost.azurite import Azurite
from shared.keys import JobKey
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from tests.conftest import HttpTarget
from tests.executor.support import JC, RG, SUB, history, job_status, make_collection, put_job
from tests.support.fault_proxy import StorageFaults


@pytest.fixture
def faults(azurite: Azurite) -> Iterator[StorageFaults]:
    proxied = StorageFaults(azurite.connection_string)
    yield proxied
    proxied.close()


@pytest.fixture
def faulty(settings: Settings, faults: StorageFaults) -> Iterator[Runtime]:
    """The app's runtime reaching storage through the proxy (same tables and queue as `runtime`)."""
    proxied = StorageSettings(connection_string=faults.connection_string)
    runtime = Runtime.create(dataclasses.replace(settings, storage=proxied))
    yield runtime
    runtime.close()


def play_trigger(
    clean: Runtime, app: Runtime, seconds: float, until: Callable[[], bool], retry_after: int = 1
) -> dict[str, int]:
    """Hand each visible message to `app`'s executor: deleted when handled, visible again `retry_after` seconds
    after a failure (the host's visibilityTimeout, host.json, is 5 s)."""
    report = {"handled": 0, "failed": 0}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        messages = list(clean.store.queue.client.receive_messages(visibility_timeout=60))
        for message in messages:
            try:
                app.executor.handle(message.content, message.id)
            except Exception:  # a storage fault: the host retries the message
                report["failed"] += 1
                clean.store.queue.client.update_message(message, visibility_timeout=retry_after)
                continue
            clean.store.queue.client.delete_message(message)
            report["handled"] += 1
        if not messages and until():
            return report
        time.sleep(0.05)
    return report


def test_a_claim_whose_answer_was_lost_is_resumed_by_its_runner_only(
    runtime: Runtime, faulty: Runtime, faults: StorageFaults
) -> None:
    job = JobKey(SUB, RG, JC, "lost-answer")
    now = datetime.now(UTC)
    faults.set_mode("drop")  # the insert reaches storage and lands; every answer is thrown away
    with pytest.raises(Exception):  # noqa: B017 - whatever the SDK raises after its retries
        faulty.store.claims.try_claim(job, "attempt-1", now, runner="delivery-a")
    faults.set_mode("pass")
    # A concurrent second delivery (another message) stops; the same delivery, redelivered, resumes.
    assert faulty.store.claims.try_claim(job, "attempt-1", now, runner="delivery-b") is None
    resumed = faulty.store.claims.try_claim(job, "attempt-1", now, runner="delivery-a")
    assert resumed is not None and resumed.taken_over


def http(url: str) -> dict[str, object]:
    return {
        "type": "Http",
        "request": {"uri": url, "method": "POST", "body": "x"},
        "retryPolicy": {"retryType": "None"},
    }


@pytest.mark.parametrize("mode", ["drop", "reset"])
def test_lossy_storage_runs_every_occurrence_once_and_books_it(
    runtime: Runtime, faulty: Runtime, faults: StorageFaults, http_target: HttpTarget, mode: str
) -> None:
    make_collection(runtime)
    names = [f"lossy{i}" for i in range(6)]
    for name in names:
        put_job(
            runtime,
            name,
            {
                "action": http(f"{http_target.url}/{name}"),
                "recurrence": None,
                "startTime": (datetime.now(UTC) + timedelta(seconds=1)).isoformat(),
            },
        )
    # A quarter of all answers (table and queue) lost, or a quarter of connections reset, for the run.
    faults.set_mode(mode, drop_ratio=0.25)
    done = lambda: all(job_status(runtime, n).execution_count >= 1 for n in names)  # noqa: E731
    report = play_trigger(runtime, faulty, 90, done)
    faults.set_mode("pass")
    fired = Counter(r.path.strip("/") for r in http_target.requests)
    assert fired == Counter(names), (fired, report)
    for name in names:
        assert job_status(runtime, name).execution_count == 1
        assert len(history(runtime, name)) == 1


def test_an_outage_after_the_action_fired_is_waited_out_not_run_again(
    runtime: Runtime, faulty: Runtime, faults: StorageFaults
) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    hits: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            hits.append(time.monotonic())
            faults.set_mode("down")  # storage goes away while the attempt is in flight
            threading.Timer(4.0, faults.set_mode, args=("pass",)).start()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        make_collection(runtime)
        put_job(
            runtime,
            "outage",
            {
                "action": http(f"http://127.0.0.1:{server.server_address[1]}/outage"),
                "startTime": (datetime.now(UTC) + timedelta(seconds=1)).isoformat(),
            },
        )
        report = play_trigger(runtime, faulty, 60, lambda: job_status(runtime, "outage").execution_count >= 1)
    finally:
        server.shutdown()
        server.server_close()
    assert len(hits) == 1, report
    assert job_status(runtime, "outage").execution_count == 1
    assert [h.status.value for h in history(runtime, "outage")] == ["Completed"]


def test_a_batch_whose_claim_transaction_lost_its_answer_fires_each_occurrence_once_at_its_second(
    runtime: Runtime, faulty: Runtime, faults: StorageFaults, http_target: HttpTarget
) -> None:
    """The claims landed and their answer never came: the transaction is sent again, meets its own claims and takes
    them as this delivery's, so the batch fires at its second, not after the host's retry of the message (5 s)."""
    make_collection(runtime)
    names = [f"claimed{i}" for i in range(4)]
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).isoformat()  # queued by hand below, not by the dispatcher
    jobs = [put_job(runtime, n, {"action": http(f"{http_target.url}/{n}"), "startTime": tomorrow}) for n in names]
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)  # claimed about 2 s ahead of it
    batch = OccurrenceBatch(tuple(OccurrenceMessage(j.key, due, due, generation=j.generation) for j in jobs))
    claims = re.escape(f"{faulty.settings.table_prefix}AttemptClaims".encode())
    faults.proxies["TableEndpoint"].drop_answers_to(rb"POST http://\S+/" + claims + rb" HTTP/1\.1")  # its creates
    runtime.store.queue.send(batch, datetime.now(UTC))
    report = play_trigger(runtime, faulty, 30, lambda: len(http_target.requests) >= len(names), retry_after=5)
    assert faults.dropped == 1, report
    assert Counter(r.path.strip("/") for r in http_target.requests) == Counter(names), report
    late = max((r.at - due).total_seconds() for r in http_target.requests)
    assert late < 1.0, (late, report)
