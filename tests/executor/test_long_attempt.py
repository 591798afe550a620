"""An attempt that outlives its claim's lease runs once: its runner renews the lease (and hides its watchdog)
while the action runs, so neither a duplicate delivery nor the watchdog takes the attempt over.

Real Azurite, a real local HTTP target that answers after the claim's lease + the takeover's wait + a margin
(shared/timings.py): were the renewal broken, a duplicate arriving just after the first lease ran out would take
the attempt over (after watching it unrenewed for the takeover's wait) while the first action still runs, and the
target would see two requests.
A second runtime plays a second host polling the same queue.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from azure.storage.queue import QueueMessage

from shared.occurrence import OccurrenceBatch
from shared.runtime import Runtime
from shared.settings import Settings
from shared.timings import Timings
from tests.executor.peers.servers import Server, ok, serve
from tests.executor.support import history, job_status, make_collection, put_job

TIMINGS = Timings()  # the settings fixture's
# Only as long as a broken renewal needs to show: the takeover's wait ends before the action does.
ACTION_SECONDS = (TIMINGS.claim_lease + TIMINGS.takeover_wait).total_seconds() + 2.0


class SecondHost:
    """Polls the occurrence queue like another host: each visible message runs on its own thread."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.delivered: list[str] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._runs: list[threading.Thread] = []
        self._poller = threading.Thread(target=self._poll, daemon=True)
        self._poller.start()

    def _poll(self) -> None:
        client = self.rt.store.queue.client
        while not self._stop.is_set():
            for message in client.receive_messages(max_messages=32, visibility_timeout=600):
                self.delivered.append(message.id)
                run = threading.Thread(target=self._run, args=(message,), daemon=True)
                self._runs.append(run)
                run.start()
            self._stop.wait(0.2)

    def _run(self, message: QueueMessage) -> None:
        try:
            self.rt.executor.handle(message.content, message.id)
            self.rt.store.queue.client.delete_message(message)
        except BaseException as error:  # reported by the test
            self.errors.append(error)

    def stop(self) -> None:
        self._stop.set()
        self._poller.join(10)
        for run in self._runs:
            run.join(30)


@pytest.fixture
def slow_target() -> Iterator[Server]:
    server = serve(ok, delay=ACTION_SECONDS)
    yield server
    server.close()


def _sleep_until(instant: datetime) -> None:
    time.sleep(max((instant - datetime.now(UTC)).total_seconds(), 0.0))


def test_an_attempt_longer_than_its_lease_runs_once_despite_duplicates_and_its_watchdog(
    settings: Settings, slow_target: Server
) -> None:
    first = Runtime.create(settings)
    make_collection(first)
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
    put_job(
        first,
        "long",
        {
            "startTime": due.isoformat(),
            "action": {
                "type": "Http",
                "request": {"uri": slow_target.url, "method": "POST", "body": "x"},
                "retryPolicy": {"retryType": "None"},
            },
        },
    )  # within the API's fast path: the API queued it
    [message] = list(first.store.queue.client.receive_messages(visibility_timeout=600))
    claim_id = OccurrenceBatch.from_json(message.content).items[0].claim_id

    runner_errors: list[BaseException] = []

    def run_first() -> None:
        try:
            first.executor.handle(message.content, message.id)
        except BaseException as error:  # reported by the test
            runner_errors.append(error)

    runner = threading.Thread(target=run_first)
    runner.start()
    second = SecondHost(Runtime.create(settings))
    try:
        # Duplicates of the occurrence (a re-dispatch) reach the other host while the action runs: one
        # under the first lease, one just after that lease would have run out without its renewals.
        _sleep_until(due + timedelta(seconds=2))
        first.store.queue.client.send_message(message.content)
        _sleep_until(due + TIMINGS.claim_lease + timedelta(seconds=0.5))
        first.store.queue.client.send_message(message.content)
        runner.join(ACTION_SECONDS + 30)
        assert not runner.is_alive()
        first.store.queue.client.delete_message(message)  # the host deletes a message that succeeded
        # A watchdog left behind turns visible `watchdog_after` past the last renewal, which came at most
        # `renew_every` before the end: the second host, still polling, would receive it by then.
        time.sleep(TIMINGS.watchdog_after.total_seconds() + 1.0)
    finally:
        second.stop()
        runner.join(30)

    assert not runner_errors and not second.errors, (runner_errors, second.errors)
    assert len(slow_target.hits) == 1
    assert len(second.delivered) == 2, second.delivered  # the two duplicates; the watchdog never turned visible
    job = job_status(first, "long")
    assert (job.execution_count, job.failure_count) == (1, 0)
    assert claim_id in job.recent_claims
    [entry] = history(first, "long")
    assert entry.retry_count == 0 and entry.end_time - entry.start_time >= timedelta(seconds=ACTION_SECONDS)
    assert first.store.queue.client.get_queue_properties().approximate_message_count == 0  # watchdog deleted
