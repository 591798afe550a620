"""Helpers shared by the executor tests (not fixtures)."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from azure.storage.queue import QueueMessage

from shared.actions import ExecutionContext
from shared.keys import JobKey
from shared.model import RetryPolicy, RetryType
from shared.records import HistoryRecord, JobRecord
from shared.runtime import Runtime
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection  # noqa: F401 - shared client


def queued(rt: Runtime) -> int:
    """Messages in the occurrence queue, invisible ones (watchdogs, delayed retries) included."""
    return rt.store.queue.client.get_queue_properties().approximate_message_count


def http(url: str) -> dict[str, object]:
    """An Http action that POSTs "x" to `url`."""
    return {"type": "Http", "request": {"uri": url, "method": "POST", "body": "x"}}


def context(attempt: int = 0) -> ExecutionContext:
    """The context the executor would build for attempt `attempt` of an occurrence of jc1/job1."""
    return ExecutionContext(
        job=JobKey("sub-1", "rg-1", "jc1", "job1"),
        execution_id=str(uuid.uuid4()),
        expected_execution_time=datetime(2026, 3, 1, 12, 0, tzinfo=UTC),
        attempt=attempt,
        region="local",
        client_request_id=str(uuid.uuid4()),
    )


def put_job(
    rt: Runtime,
    name: str,
    properties: dict[str, Any],
    retry: RetryPolicy | None = None,
    error_retry: RetryPolicy | None = None,
) -> JobRecord:
    """Create a job through the API, then store retry policies the API would refuse (intervals under 15 s).

    The API's 15 s minimum is a validation rule; the executor honours whatever policy is stored, and this
    keeps the tests fast without a test path in production code.
    """
    response = call(rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": properties})
    assert response.status in (200, 201), response.body
    record = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
    assert record is not None and record.properties.action is not None
    if retry is not None or error_retry is not None:
        # New objects, never a change in place: the store remembers a parsed definition by identity
        # (store/definitions.py), so a properties object changed in place would be written as the text it was read from.
        action = record.properties.action
        if retry is not None:
            action = action.model_copy(update={"retry_policy": retry})
        if error_retry is not None and action.error_action is not None:
            error_action = action.error_action.model_copy(update={"retry_policy": error_retry})
            action = action.model_copy(update={"error_action": error_action})
        properties = record.properties.model_copy(update={"action": action})
        record = rt.store.jobs.replace(dataclasses.replace(record, properties=properties))
    return record


def fixed(seconds: float, count: int) -> RetryPolicy:
    return RetryPolicy(retry_type=RetryType.FIXED, retry_interval=timedelta(seconds=seconds), retry_count=count)


def job_status(rt: Runtime, name: str) -> JobRecord:
    record = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
    assert record is not None
    return record


def history(rt: Runtime, name: str) -> list[HistoryRecord]:
    """Newest first, as the API lists it."""
    records: list[HistoryRecord] = []
    token: Any = None
    while True:
        page, token = rt.store.history.page(JobKey(SUB, RG, JC, name), None, 1000, token)
        records += page
        if token is None:
            return records


class QueueTrigger:
    """The occurrence queue's trigger as the host plays it: every visible message handed to the executor on a
    thread of its own (a held action does not stop the next message), then deleted."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        queue = self.rt.store.queue.client
        while not self.stopped.is_set():
            for message in queue.receive_messages(visibility_timeout=120):
                threading.Thread(target=self._handle, args=(message,), daemon=True).start()
            time.sleep(0.05)

    def _handle(self, message: QueueMessage) -> None:
        self.rt.executor.handle(message.content)
        self.rt.store.queue.client.delete_message(message)

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(10)
