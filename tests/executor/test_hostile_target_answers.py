"""Nothing a target answers makes an action fire twice for one attempt or leaves the attempt unrecorded (issue 36).

Real local HTTP targets answer an Http action with `request.asyncCompletion` (newer api-version) as a hostile or
careless server would: a Retry-After too large for a time span, one in digits that are not ASCII, a Location of
60,000 characters, an Azure-AsyncOperation that is no http(s) URL, a reason phrase longer than a history entry
holds, bytes that are not UTF-8. The queue trigger is played as the Functions host plays it (`play_host`): a
delivery that fails comes back at once, so an executor failure after the request went out would fire the action
again. Each case asserts the request reached the target once, no delivery failed, and the attempt is recorded
(the ledger's `Running` while its work is polled, else history and ledger with the reason).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, JobExecutionStatus
from shared.occurrence import OccurrenceMessage, Trigger
from shared.records import HistoryRecord, LedgerEntry
from shared.runtime import Runtime
from tests.executor.peers.raw import RawReply
from tests.executor.peers.servers import Hit, Server, serve
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection

KEY = JobKey(SUB, RG, JC, "hostile")
DELIVERIES = 5  # the host's maxDequeueCount is 20; five show a repeat as well, and sooner


def play_host(rt: Runtime, seconds: float, until: Callable[[], bool]) -> list[BaseException]:
    """The queue trigger as the Functions host plays it: each visible message to the executor with its id and
    dequeue count, deleted on success, visible again at once after a failure (up to DELIVERIES). The failures."""
    failures: list[BaseException] = []
    queue = rt.store.queue.client
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        messages = list(queue.receive_messages(visibility_timeout=60))
        for message in messages:
            try:
                rt.executor.handle(message.content, message.id, message.dequeue_count)
            except Exception as error:  # the host delivers it again
                failures.append(error)
                if (message.dequeue_count or 1) < DELIVERIES:
                    queue.update_message(message, visibility_timeout=0)
                    continue
            queue.delete_message(message)
        if not messages and until():
            break
        time.sleep(0.05)
    return failures


def create_job(rt: Runtime, url: str, completion: dict[str, Any] | None = None) -> None:
    make_collection(rt)
    request: dict[str, Any] = {"uri": f"{url}/work", "method": "POST"}
    if completion is not None:
        request["asyncCompletion"] = completion
    body = {
        "properties": {
            "startTime": (datetime.now(UTC) + timedelta(days=1)).isoformat(),  # the test queues the occurrence
            "action": {"type": "Http", "request": request, "retryPolicy": {"retryType": "None"}},
        }
    }
    response = call(rt, "Jobs_CreateOrUpdate", "PUT", KEY.job, body, query={"api-version": PREVIEW_API_VERSION})
    assert response.status == 201, response.body


def queue_occurrence(rt: Runtime) -> None:
    job = rt.store.jobs.get(KEY)
    assert job is not None
    at = datetime.now(UTC).replace(microsecond=0)
    rt.store.queue.send(OccurrenceMessage(KEY, at, at, Trigger.RUN_NOW, generation=job.generation), at)


def ledger(rt: Runtime) -> list[LedgerEntry]:
    entries, _ = rt.store.history.ledger_page(KEY, None, None, None, 10)
    return entries


def history(rt: Runtime) -> list[HistoryRecord]:
    records, _ = rt.store.history.page(KEY, None, 10)
    return records


def ended(rt: Runtime) -> bool:
    entries = ledger(rt)
    return bool(entries) and entries[0].status not in (JobExecutionStatus.RUNNING, JobExecutionStatus.WAITING)


def running(rt: Runtime) -> bool:
    return [entry.status for entry in ledger(rt)] == [JobExecutionStatus.RUNNING]


def wire(headers: dict[str, str | bytes]) -> dict[str, str]:
    """Header values as http.server writes them (Latin-1, one character a byte): text as its UTF-8 bytes, bytes
    as they are."""
    return {
        name: (value if isinstance(value, bytes) else value.encode("utf-8")).decode("latin-1")
        for name, value in headers.items()
    }


class Accepting:
    """POST /work answers 202 with `headers`; a GET (a poll) answers `poll`, by default 200 "done"."""

    def __init__(
        self,
        headers: dict[str, str | bytes],
        poll: tuple[int, dict[str, str | bytes], bytes] = (200, {}, b"the work is done"),
    ) -> None:
        self.headers, self.poll = wire(headers), (poll[0], wire(poll[1]), poll[2])
        self.server: Server = serve(self._answer)

    def _answer(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        return (202, self.headers, b"accepted") if hit.method == "POST" else self.poll

    def posts(self) -> list[Hit]:
        return [hit for hit in list(self.server.hits) if hit.method == "POST"]

    def gets(self) -> list[Hit]:
        return [hit for hit in list(self.server.hits) if hit.method == "GET"]


@pytest.fixture
def targets() -> Iterator[list[Accepting]]:
    made: list[Accepting] = []
    yield made
    for target in made:
        target.server.close()


def accepting(targets: list[Accepting], headers: dict[str, str | bytes], **kwargs: Any) -> Accepting:
    target = Accepting(headers, **kwargs)
    targets.append(target)
    return target


@pytest.mark.parametrize(
    "value",
    [
        "99999999999999999999",  # a time span overflows at about 8.6e13 seconds
        "9" * 301,  # a float then is 1e301
        "9" * 60_000,  # too many digits for an int conversion at all
        "Fri, 31 Dec 9999 23:59:59 GMT",  # the last HTTP-date there is
    ],
    ids=["20-digits", "301-digits", "60000-digits", "year-9999"],
)
def test_a_huge_retry_after_fires_the_action_once_and_the_work_is_polled(
    runtime: Runtime, targets: list[Accepting], value: str
) -> None:
    target = accepting(targets, {"Location": "/status/1", "Retry-After": value})
    create_job(runtime, target.server.url, {"deadline": "PT1M", "pollingInterval": "PT1S"})
    queue_occurrence(runtime)
    failures = play_host(runtime, 30, until=lambda: running(runtime))
    assert failures == []
    assert len(target.posts()) == 1
    # Recorded: the ledger shows the occurrence Running (its first poll is queued, due within the clamp: at the
    # deadline here, PT1M, tests/executor/test_target_header_parsing.py shows the clamp itself).
    assert running(runtime)
    assert history(runtime) == [] and target.gets() == []


@pytest.mark.parametrize("value", ["²", "٣٠", "３０", "1e3", "-5", "0x10", "soon"])
def test_an_unreadable_retry_after_counts_as_absent_and_the_polling_interval_applies(
    runtime: Runtime, targets: list[Accepting], value: str
) -> None:
    target = accepting(targets, {"Location": "/status/1", "Retry-After": value})
    create_job(runtime, target.server.url, {"pollingInterval": "PT1S"})
    queue_occurrence(runtime)
    failures = play_host(runtime, 30, until=lambda: ended(runtime))
    assert failures == []
    assert len(target.posts()) == 1 and len(target.gets()) == 1
    [entry] = history(runtime)
    assert entry.status == JobExecutionStatus.COMPLETED, entry.message
    assert "the work is done" in entry.message
    # The pollingInterval (PT1S), not a Retry-After read as 30 s from Arabic-Indic or fullwidth digits
    assert target.gets()[0].at - target.posts()[0].at < timedelta(seconds=10)
    assert [e.status for e in ledger(runtime)] == [JobExecutionStatus.COMPLETED]


def assert_failed_once(rt: Runtime, target: Accepting, failures: list[BaseException], reason: str) -> HistoryRecord:
    assert failures == []
    assert len(target.posts()) == 1
    [entry] = history(rt)
    assert entry.status == JobExecutionStatus.FAILED
    assert reason in entry.message, entry.message
    assert len(entry.message) < 16_000
    [row] = ledger(rt)
    assert row.status == JobExecutionStatus.FAILED and reason in (row.message or ""), row.message
    job = rt.store.jobs.get(KEY)
    assert job is not None and job.execution_count == 1 and job.failure_count == 1
    return entry


def test_a_location_of_60000_characters_fails_the_attempt_once_naming_it(
    runtime: Runtime, targets: list[Accepting]
) -> None:
    target = accepting(targets, {"Location": "/status/" + "a" * 60_000, "Retry-After": "1"})
    create_job(runtime, target.server.url, {"deadline": "PT1M", "pollingInterval": "PT1S"})
    queue_occurrence(runtime)
    failures = play_host(runtime, 30, until=lambda: ended(runtime))
    entry = assert_failed_once(runtime, target, failures, "cannot be polled: its Location is 60008 bytes long")
    assert entry.message.startswith("Http Action - Host '127.0.0.1' accepted the work (202 Accepted)")
    assert target.gets() == []


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Azure-AsyncOperation": "javascript:alert(1)"}, "its Azure-AsyncOperation is not an http(s) URL"),
        ({"Azure-AsyncOperation": "ftp://127.0.0.1/op"}, "its Azure-AsyncOperation is not an http(s) URL"),
        ({"Location": "//:80/no-host"}, "its Location is not an http(s) URL"),
        ({"Location": "http://127.0.0.1:99999/status"}, "its Location is not a valid URL"),
        ({"Location": "http://[::1/status"}, "its Location is not a valid URL"),
        ({"Location": "/status/\x01"}, "its Location holds control characters"),
        ({"Location": b"/status/\xff"}, "its Location is not a valid URL"),  # not UTF-8 on the wire
        ({"Location": "/status/" + "\U0001f600" * 6000}, "cannot be polled: its Location is 24008 bytes long"),
    ],
    ids=["javascript", "ftp", "no-host", "port", "bracket", "control", "not-utf8", "emoji"],
)
def test_an_address_that_cannot_be_polled_fails_the_attempt_once_with_the_reason(
    runtime: Runtime, targets: list[Accepting], headers: dict[str, str | bytes], reason: str
) -> None:
    target = accepting(targets, headers)
    create_job(runtime, target.server.url, {"pollingInterval": "PT1S"})
    queue_occurrence(runtime)
    failures = play_host(runtime, 30, until=lambda: ended(runtime))
    assert_failed_once(runtime, target, failures, reason)
    assert target.gets() == []


def test_a_poll_answering_with_an_address_that_cannot_be_polled_ends_the_work_once(
    runtime: Runtime, targets: list[Accepting]
) -> None:
    poll = (202, {"Location": "/status/" + "b" * 60_000, "Retry-After": "99999999999999999999"}, b"still working")
    target = accepting(targets, {"Location": "/status/1", "Retry-After": "1"}, poll=poll)
    create_job(runtime, target.server.url, {"pollingInterval": "PT1S"})
    queue_occurrence(runtime)
    failures = play_host(runtime, 30, until=lambda: ended(runtime))
    assert_failed_once(runtime, target, failures, "cannot be polled: its Location is 60008 bytes long")
    assert len(target.gets()) == 1  # the poll, too, went out once


def test_a_poll_that_cannot_be_queued_fails_the_attempt_once_with_the_reason(
    runtime: Runtime, targets: list[Accepting]
) -> None:
    """The occurrence queue is gone when the poll's message is sent (404 QueueNotFound, which no retry cures)."""
    queue = runtime.store.queue.client

    class Vanishing(Accepting):
        def _answer(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
            queue.delete_queue()  # before the 202 reaches the executor
            return super()._answer(hit)

    target = Vanishing({"Location": "/status/1", "Retry-After": "1"})
    targets.append(target)
    create_job(runtime, target.server.url, {"pollingInterval": "PT1S"})
    job = runtime.store.jobs.get(KEY)
    assert job is not None
    at = datetime.now(UTC).replace(microsecond=0)
    runtime.executor.run(OccurrenceMessage(KEY, at, at, Trigger.RUN_NOW, generation=job.generation))  # no raise
    assert_failed_once(runtime, target, [], "its poll could not be queued (QueueNotFound)")


@pytest.mark.parametrize(
    ("reply", "shown"),
    [
        (b"HTTP/1.1 500 " + b"R" * 40_000 + b"\r\nContent-Length: 0\r\n\r\n", "'" + "R" * 200),
        (
            b"HTTP/1.1 500 Oops \xff\xfe\r\nX-Bytes: \xc3\x28\xff\r\nContent-Length: 2\r\n\r\n\xff!",
            "'Oops \ufffd\ufffd' Response Headers: X-Bytes: \ufffd(\ufffd",  # as the body's bytes: U+FFFD
        ),
    ],
    ids=["40000-character-reason", "not-utf8"],
)
def test_a_reason_phrase_or_header_bytes_of_any_size_or_spelling_are_recorded_once(
    runtime: Runtime, reply: bytes, shown: str
) -> None:
    """A history entry is one Table property of at most 32K characters: a message over that fails the write, and
    the attempt would run again. Bytes that are not UTF-8 are shown as U+FFFD, not kept as lone surrogates that a
    strict JSON reader of the history refuses."""
    target = RawReply(reply)
    try:
        create_job(runtime, target.url)
        queue_occurrence(runtime)
        failures = play_host(runtime, 30, until=lambda: ended(runtime))
        assert failures == []
        assert target.requests == 1
        [entry] = history(runtime)
        assert entry.status == JobExecutionStatus.FAILED
        assert entry.message.startswith("Http Action - Response from host '127.0.0.1': ") and shown in entry.message
        assert len(entry.message) < 16_000
    finally:
        target.close()
