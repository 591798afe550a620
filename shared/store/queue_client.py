"""`MessageQueue`: the queue operations the app sends, as azure `QueueClient` names them.

The occurrence and dispatch queues (queue.py, dispatch_queue.py) and the health check take any object with
these methods: an azure `QueueClient` made with `queue.base64_text()` (what the app runs on), or a
`MemoryQueue` (memory/queue.py); tests/store/contract runs the same tests against both, on Azurite.

The contract, as the service keeps it: `create_queue` raises ResourceExistsError when the queue exists; on a
queue not created every call raises ResourceNotFoundError (QueueNotFound). `send_message` answers the message's
`id` and `pop_receipt`; the text may take 64 KiB as sent (Base64), else HttpResponseError 413
(RequestBodyTooLarge); `visibility_timeout` 0 to 7 days, less than `time_to_live` (seconds; -1: never expires;
None: 7 days). `update_message` and `delete_message` need the message's latest pop receipt (each receive and
update makes a new one): an older one is refused with HttpResponseError 400 (PopReceiptMismatch), a message gone
(deleted, expired) with ResourceNotFoundError (MessageNotFound). `update_message` answers the new receipt.
`get_queue_properties().approximate_message_count` counts the messages, hidden ones too. `peek_messages` (1 to 32;
1 when None) answers visible messages from the front without changing them (no pop receipt): health reads it.
"""

from __future__ import annotations

from typing import Any, Protocol

from azure.storage.queue import QueueMessage, QueueProperties


class MessageQueue(Protocol):
    def create_queue(self) -> None: ...

    def send_message(
        self, content: Any, *, visibility_timeout: int | None = None, time_to_live: int | None = None
    ) -> QueueMessage: ...

    def update_message(
        self, message: str, pop_receipt: str | None = None, *, visibility_timeout: int | None = None
    ) -> QueueMessage: ...

    def delete_message(self, message: str, pop_receipt: str | None = None) -> None: ...

    def get_queue_properties(self) -> QueueProperties: ...

    def peek_messages(self, max_messages: int | None = None) -> list[QueueMessage]: ...
