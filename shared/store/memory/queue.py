"""`MemoryQueue`: the `MessageQueue` contract (shared/store/queue_client.py) in memory, on the clock given, as an
azure `QueueClient` made with `base64_text()` keeps it on Storage queues; and the reads the tests make
(`receive_messages`, `peek_messages`, `clear_messages`), as the SDK answers them.

A message is hidden until its `next_visible_on` and gone at its `expires_on` (both read on the clock, so a
ManualClock moves them). Each receive and update makes a new pop receipt and only the latest one updates or
deletes the message (an older one: 400 PopReceiptMismatch; a message deleted or expired: 404 MessageNotFound).
The answers are the SDK's own `QueueMessage` and `QueueProperties`, with the fields the service fills for each
call. One lock per queue.
"""

from __future__ import annotations

import base64
import re
import threading
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from azure.storage.queue import QueueMessage, QueueProperties

from ...clock import Clock
from ..queue_client import MessageQueue
from .errors import bad_request, exists, message_not_found, queue_not_found, too_large

MAX_MESSAGE_BYTES = 65_536  # of the text as sent: Base64
MAX_SECONDS = 7 * 24 * 3600  # the longest visibility timeout, and the default time to live
RECEIVE_VISIBILITY = 30  # seconds a received message stays hidden unless told
NEVER = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)  # the expiry of a message with time to live -1
_NAME = re.compile(r"[a-z0-9](?:[a-z0-9]|-(?!-)){1,61}[a-z0-9]")


@dataclass(frozen=True)
class _Message:
    id: str
    content: str
    inserted_on: datetime
    expires_on: datetime
    next_visible_on: datetime
    pop_receipt: str
    dequeue_count: int = 0


class MemoryQueue(MessageQueue):
    def __init__(self, name: str, clock: Clock) -> None:
        self.queue_name = name
        self._clock = clock
        self._lock = threading.Lock()
        self._messages: dict[str, _Message] | None = None  # None: not created; in the order they were sent

    def create_queue(self) -> None:
        if not _NAME.fullmatch(self.queue_name):
            raise bad_request("InvalidResourceName", "The specified resource name contains invalid characters.")
        with self._lock:
            if self._messages is not None:
                raise exists("QueueAlreadyExists", "The specified queue already exists.")
            self._messages = {}

    def send_message(
        self, content: Any, *, visibility_timeout: int | None = None, time_to_live: int | None = None
    ) -> QueueMessage:
        text = _text(content)
        hidden = _seconds("visibilitytimeout", visibility_timeout or 0, 0)
        ttl = MAX_SECONDS if time_to_live is None else time_to_live
        # A time to live given must outlast the visibility timeout; the default one need not (Azurite's rule).
        if time_to_live is not None and ttl != -1 and (ttl < 1 or hidden >= ttl):
            raise bad_request("InvalidQueryParameterValue", f"time to live {ttl} (with visibility {hidden})")
        with self._lock:
            messages, now = self._live()
            expires = NEVER if ttl == -1 else now + timedelta(seconds=ttl)
            sent = _Message(str(uuid.uuid4()), text, now, expires, now + timedelta(seconds=hidden), _receipt())
            messages[sent.id] = sent
        return _answer(sent, content=text, pop_receipt=sent.pop_receipt, next_visible_on=sent.next_visible_on)

    def update_message(
        self,
        message: str | QueueMessage,
        pop_receipt: str | None = None,
        content: Any = None,
        *,
        visibility_timeout: int | None = None,
    ) -> QueueMessage:
        if isinstance(message, QueueMessage):  # the SDK sends its text again, and its receipt unless given one
            pop_receipt, content = pop_receipt or message.pop_receipt, content or message.content
        message_id = message.id if isinstance(message, QueueMessage) else message
        if pop_receipt is None:
            raise ValueError("pop_receipt must be present")
        if visibility_timeout is None:
            raise bad_request("MissingRequiredQueryParameter", "visibilitytimeout is required")
        hidden = _seconds("visibilitytimeout", visibility_timeout, 0)
        text = _text(content) if content is not None else None
        with self._lock:
            messages, now = self._live()
            found = _held(messages, str(message_id), pop_receipt)
            updated = replace(
                found,
                content=found.content if text is None else text,
                next_visible_on=now + timedelta(seconds=hidden),
                pop_receipt=_receipt(),
            )
            messages[found.id] = updated
        return QueueMessage(id=updated.id, pop_receipt=updated.pop_receipt, next_visible_on=updated.next_visible_on)

    def delete_message(self, message: str | QueueMessage, pop_receipt: str | None = None) -> None:
        if isinstance(message, QueueMessage):
            pop_receipt = pop_receipt or message.pop_receipt
        message_id = message.id if isinstance(message, QueueMessage) else message
        if pop_receipt is None:
            raise ValueError("pop_receipt must be present")
        with self._lock:
            messages, _ = self._live()
            del messages[_held(messages, str(message_id), pop_receipt).id]

    def get_queue_properties(self) -> QueueProperties:
        with self._lock:
            messages, _ = self._live()
            properties = QueueProperties(metadata={})
            properties.name = self.queue_name
            properties.approximate_message_count = len(messages)  # hidden ones too
        return properties

    def receive_messages(
        self, *, max_messages: int | None = None, visibility_timeout: int | None = None
    ) -> list[QueueMessage]:
        """Up to `max_messages` visible messages (all of them when None), each hidden for `visibility_timeout`
        seconds (1 to 7 days; 30 when None) under a new pop receipt."""
        hidden = _seconds(
            "visibilitytimeout", RECEIVE_VISIBILITY if visibility_timeout is None else visibility_timeout, 1
        )
        with self._lock:
            messages, now = self._live()
            taken = [m for m in messages.values() if m.next_visible_on <= now][:max_messages]
            for found in taken:
                messages[found.id] = replace(
                    found,
                    next_visible_on=now + timedelta(seconds=hidden),
                    pop_receipt=_receipt(),
                    dequeue_count=found.dequeue_count + 1,
                )
            received = [messages[found.id] for found in taken]
        return [
            _answer(
                m,
                content=m.content,
                pop_receipt=m.pop_receipt,
                next_visible_on=m.next_visible_on,
                dequeue_count=m.dequeue_count,
            )
            for m in received
        ]

    def peek_messages(self, max_messages: int | None = None) -> list[QueueMessage]:
        """Up to `max_messages` (1 to 32; 1 when None) visible messages, left as they are: no pop receipt."""
        if max_messages and not 1 <= max_messages <= 32:
            raise ValueError("Number of messages to peek should be between 1 and 32")
        with self._lock:
            messages, now = self._live()
            visible = [m for m in messages.values() if m.next_visible_on <= now][: max_messages or 1]
        return [_answer(m, content=m.content, dequeue_count=m.dequeue_count) for m in visible]

    def clear_messages(self) -> None:
        with self._lock:
            self._live()[0].clear()

    def _live(self) -> tuple[dict[str, _Message], datetime]:
        """The messages not expired (dropping those that are), and now; the caller holds the lock."""
        if self._messages is None:
            raise queue_not_found()
        now = self._clock.now()
        for gone in [m.id for m in self._messages.values() if m.expires_on <= now]:
            del self._messages[gone]
        return self._messages, now


def _held(messages: dict[str, _Message], message_id: str, pop_receipt: str) -> _Message:
    found = messages.get(message_id)
    if found is None:
        raise message_not_found()
    if found.pop_receipt != pop_receipt:
        message = "The specified pop receipt did not match the pop receipt for a dequeued message."
        raise bad_request("PopReceiptMismatch", message)
    return found


def _answer(message: _Message, **fields: Any) -> QueueMessage:
    return QueueMessage(id=message.id, inserted_on=message.inserted_on, expires_on=message.expires_on, **fields)


def _text(content: Any) -> str:
    if not isinstance(content, str):
        raise TypeError("Message content must be text for base 64 encoding.")  # as TextBase64EncodePolicy says
    size = len(base64.b64encode(content.encode()))
    if size > MAX_MESSAGE_BYTES:
        raise too_large(f"a message of {size} bytes as sent (at most {MAX_MESSAGE_BYTES})")
    return content


def _seconds(name: str, value: int, least: int) -> int:
    if not least <= value <= MAX_SECONDS:
        raise bad_request("OutOfRangeQueryParameterValue", f"{name} {value} is outside {least} to {MAX_SECONDS}")
    return value


def _receipt() -> str:
    return base64.b64encode(uuid.uuid4().bytes).decode()
