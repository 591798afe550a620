"""Queues: a queue must exist; messages hidden until their time and gone at their expiry; pop receipts that
change with each receive and update, the latest alone valid; the size and range limits; the dispatch queue's own
watchdog path on top: the same on Azurite and in memory (Azurite's time: real waits, 1.5 s, two tests)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError

from shared.store.queues import DispatchQueue, Receipt, ShardTask
from shared.timings import Timings
from tests.store.contract.backends import Backend

WAIT = 1.5  # past a 1 s visibility or time to live (the service counts whole seconds)


def _visible(queue: Any) -> list[str]:
    return sorted(m.content for m in queue.peek_messages(max_messages=32))


def _refused(error: pytest.ExceptionInfo[HttpResponseError]) -> tuple[int | None, object]:
    # The SDK's codes are str enums (StorageErrorCode): equal to the service's text, not printed as it.
    return error.value.status_code, error.value.error_code


def test_a_queue_must_be_created_first(backend: Backend) -> None:
    queue = backend.queue(create=False)
    calls = [
        lambda: queue.send_message("x"),
        lambda: queue.receive_messages(max_messages=1),
        lambda: queue.peek_messages(),
        lambda: queue.update_message("id", "receipt", visibility_timeout=1),
        lambda: queue.delete_message("id", "receipt"),
        lambda: queue.get_queue_properties(),
    ]
    for call in calls:
        with pytest.raises(ResourceNotFoundError) as missing:
            list(call() or ())
        assert _refused(missing) == (404, "QueueNotFound")
    queue.create_queue()
    with pytest.raises(ResourceExistsError):
        queue.create_queue()
    queue.send_message("x")
    assert _visible(queue) == ["x"]


def test_a_receive_hides_the_message_under_a_new_receipt(backend: Backend) -> None:
    queue = backend.queue()
    sent = queue.send_message("hello")
    assert sent.id and sent.pop_receipt and sent.content == "hello"
    (peeked,) = queue.peek_messages(max_messages=32)
    assert (peeked.id, peeked.content, peeked.dequeue_count, peeked.pop_receipt) == (sent.id, "hello", 0, None)
    (received,) = queue.receive_messages(max_messages=32, visibility_timeout=60)
    assert (received.id, received.content, received.dequeue_count) == (sent.id, "hello", 1)
    assert received.pop_receipt not in (None, sent.pop_receipt)
    assert received.next_visible_on >= received.inserted_on + timedelta(seconds=59)
    assert _visible(queue) == [] and list(queue.receive_messages(max_messages=32)) == []
    assert queue.get_queue_properties().approximate_message_count == 1  # hidden ones count


def test_only_the_latest_pop_receipt_updates_or_deletes(backend: Backend) -> None:
    queue = backend.queue()
    sent = queue.send_message("m")
    (received,) = queue.receive_messages(max_messages=1, visibility_timeout=60)
    for stale in (
        lambda: queue.delete_message(sent.id, sent.pop_receipt),
        lambda: queue.update_message(sent.id, sent.pop_receipt, visibility_timeout=0),
    ):
        with pytest.raises(HttpResponseError) as refused:
            stale()
        assert _refused(refused) == (400, "PopReceiptMismatch")
    updated = queue.update_message(received.id, received.pop_receipt, visibility_timeout=60)
    assert updated.id == sent.id and updated.pop_receipt not in (None, received.pop_receipt)
    with pytest.raises(HttpResponseError) as refused:
        queue.delete_message(received.id, received.pop_receipt)
    assert _refused(refused) == (400, "PopReceiptMismatch")
    queue.delete_message(updated.id, updated.pop_receipt)
    with pytest.raises(ResourceNotFoundError) as gone:
        queue.delete_message(updated.id, updated.pop_receipt)
    assert _refused(gone) == (404, "MessageNotFound")
    with pytest.raises(ResourceNotFoundError):
        queue.update_message(updated.id, updated.pop_receipt, visibility_timeout=1)
    assert queue.get_queue_properties().approximate_message_count == 0


def test_hidden_messages_show_when_their_time_comes(backend: Backend) -> None:
    queue = backend.queue()
    queue.send_message("sent hidden", visibility_timeout=1)
    queue.send_message("received")
    (received,) = queue.receive_messages(max_messages=1, visibility_timeout=1)
    pushed = queue.send_message("updated")
    queue.update_message(pushed.id, pushed.pop_receipt, visibility_timeout=1)  # a send's receipt hides it again
    queue.send_message("visible")
    assert _visible(queue) == ["visible"]
    backend.advance(WAIT)
    assert _visible(queue) == ["received", "sent hidden", "updated", "visible"]
    again = {m.content: m for m in queue.receive_messages(max_messages=32, visibility_timeout=60)}
    assert again["received"].dequeue_count == 2 and again["sent hidden"].dequeue_count == 1
    with pytest.raises(HttpResponseError):  # received again: its first receipt is no longer the latest
        queue.delete_message(received.id, received.pop_receipt)


def test_a_message_expires_after_its_time_to_live(backend: Backend) -> None:
    queue = backend.queue()
    short = queue.send_message("short", time_to_live=1)
    forever = queue.send_message("forever", time_to_live=-1)
    assert forever.expires_on.year == 9999
    assert short.expires_on - short.inserted_on == timedelta(seconds=1)
    assert _visible(queue) == ["forever", "short"]
    backend.advance(WAIT)
    assert _visible(queue) == ["forever"]
    with pytest.raises(ResourceNotFoundError):
        queue.delete_message(short.id, short.pop_receipt)


def test_a_message_takes_64_kib_as_sent(backend: Backend) -> None:
    queue = backend.queue()
    queue.send_message("a" * 49_152)  # Base64: 65,536 characters
    queue.send_message("é" * 24_576)  # two bytes each in UTF-8: the same
    for over in ("a" * 49_153, "é" * 24_577):
        with pytest.raises(HttpResponseError) as refused:
            queue.send_message(over)
        assert _refused(refused) == (413, "RequestBodyTooLarge")
    assert queue.get_queue_properties().approximate_message_count == 2


@pytest.mark.parametrize(
    "keywords",
    [
        {"time_to_live": 0},
        {"time_to_live": -2},
        {"time_to_live": 5, "visibility_timeout": 5},
        {"visibility_timeout": 7 * 24 * 3600 + 1},
        {"visibility_timeout": -1},
    ],
)
def test_times_out_of_range_are_refused(backend: Backend, keywords: dict[str, int]) -> None:
    queue = backend.queue()
    with pytest.raises(HttpResponseError) as refused:
        queue.send_message("x", **keywords)
    assert refused.value.status_code == 400
    queue.send_message("x", visibility_timeout=7 * 24 * 3600)  # the longest
    with pytest.raises(HttpResponseError):
        list(queue.receive_messages(max_messages=1, visibility_timeout=0))  # a receive hides for 1 s at least
    assert queue.get_queue_properties().approximate_message_count == 1


def test_peek_takes_1_to_32_and_clear_empties(backend: Backend) -> None:
    queue = backend.queue()
    for i in range(3):
        queue.send_message(f"m{i}")
    assert [m.content for m in queue.peek_messages()] == ["m0"]
    with pytest.raises(ValueError):
        queue.peek_messages(max_messages=33)
    queue.clear_messages()
    assert _visible(queue) == [] and queue.get_queue_properties().approximate_message_count == 0


def test_a_dispatch_task_and_its_watchdog(backend: Backend) -> None:
    """The app's own path over the queue: a guarded task names its hidden watchdog, which the handler renews
    (hide) and deletes by the receipts each step answers."""
    dispatch = DispatchQueue(backend.queue(create=False), Timings())
    dispatch.ensure_exists()
    dispatch.ensure_exists()  # an existing queue is fine
    dispatch.send(ShardTask("202603011201", 3))
    (message,) = dispatch.client.receive_messages(max_messages=32, visibility_timeout=60)
    task = ShardTask.from_json(message.content)
    assert (task.bucket, task.shard) == ("202603011201", 3) and task.watchdog is not None
    assert dispatch.client.get_queue_properties().approximate_message_count == 2  # the watchdog, hidden
    renewed = dispatch.hide(Receipt(*task.watchdog), 30)
    with pytest.raises(HttpResponseError):
        dispatch.hide(Receipt(*task.watchdog), 30)  # its first receipt went with the renewal
    dispatch.delete(renewed)
    dispatch.delete(Receipt(message.id, message.pop_receipt))
    assert dispatch.client.get_queue_properties().approximate_message_count == 0
    assert json.loads(message.content)["w"] == list(task.watchdog)
