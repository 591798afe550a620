"""Queue triggers with the host's polling, batching, retry and poison-queue behaviour (host.json queues).

Contract, per queue-triggered function (`QueueListener`):
- `start()` creates the queue and `<queue>-poison` if missing (so a missing Azurite fails start loudly).
- Polling fetches up to batchSize messages in one request, hidden for 10 minutes while the function runs,
  and hands each to the function as soon as it is read (none waits for a later request); it polls again
  at once after a non-empty fetch, and backs off exponentially from 100 ms to maxPollingInterval while
  the queue is empty. A new batch is fetched only when in-flight messages drop to newBatchThreshold.
- Each message runs on the listener's thread pool as a `func.QueueMessage` (body decoded per
  messageEncoding). Success deletes it. Failure (including undecodable Base64) makes it visible again
  after visibilityTimeout, or, once dequeue_count reached maxDequeueCount, copies the original text to
  `<queue>-poison` and deletes it. A message fetched with a dequeue count already above the maximum goes
  straight to the poison queue, as in the host.
- `stop()` stops polling, hands back fetched-but-unstarted messages (visible again at once) and waits
  briefly for running invocations.
Clients send and receive message text exactly as stored (no SDK encode/decode policy): host.json's
messageEncoding decides the wire form ("base64": Base64 of the bytes; "none": the UTF-8 text itself).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from azure.core.exceptions import AzureError, ResourceExistsError
from azure.functions.queue import QueueMessage as FunctionQueueMessage
from azure.storage.queue import LinearRetry, QueueClient, QueueMessage

from devhost.hostconfig import QueueOptions
from devhost.indexing import FunctionInfo
from devhost.invoker import Invokes
from devhost.settings import resolve_references, storage_connection
from shared.store.transport import PooledTransport

log = logging.getLogger(__name__)
RECEIVE_VISIBILITY_SECONDS = 600
MIN_POLL_SECONDS = 0.1


def queue_client(connection_string: str, queue_name: str, connections: int = 10) -> QueueClient:
    # Few, quick retries: a local host should report a missing Azurite promptly and stop without delay. The
    # queue SDK takes its backoff from a retry_policy object only (retry_backoff_factor is ignored).
    # `connections` kept per endpoint: requests keeps 10, and a listener whose workers delete their messages
    # side by side then opens and drops a connection per call beyond them ("Connection pool is full"); the
    # real host's HttpClient has no such limit, so local figures would lie.
    return QueueClient.from_connection_string(
        connection_string,
        queue_name,
        # The timeouts live on the transport: a client's own timeout keywords only reach a transport it builds.
        transport=PooledTransport(connections, connection_timeout=5, read_timeout=10),
        # The SDK annotates these seconds as int; it computes with floats.
        retry_policy=LinearRetry(backoff=0.5, random_jitter_range=0.25, retry_total=2),  # type: ignore[arg-type]
    )


def ensure_queue(client: QueueClient) -> None:
    with contextlib.suppress(ResourceExistsError):
        client.create_queue()


def decode_message(text: str, encoding: str) -> bytes:
    """Payload bytes of a stored message; raises ValueError when base64 text is not valid Base64."""
    if encoding != "base64":
        return text.encode("utf-8")
    try:
        # .NET's Convert.FromBase64String tolerates whitespace but nothing else outside the alphabet.
        return base64.b64decode("".join(text.split()), validate=True)
    except binascii.Error as error:
        raise ValueError(f"message is not valid Base64 (host.json messageEncoding is base64): {error}") from error


class QueueListener:
    def __init__(self, function: FunctionInfo, options: QueueOptions, invoker: Invokes) -> None:
        self._function = function
        self._options = options
        self._invoker = invoker
        self.queue_name = resolve_references(function.queue_name or "")
        connection = storage_connection(function.connection)
        workers = options.batch_size + options.new_batch_threshold
        # Every worker and the poller may call the queue at once.
        self._client = queue_client(connection, self.queue_name, workers + 1)
        self._poison = queue_client(connection, f"{self.queue_name}-poison", workers)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"devhost-queue-{self.queue_name}")
        self._in_flight: dict[Future[None], QueueMessage] = {}
        self._changed = threading.Condition()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._poll, name=f"devhost-poll-{self.queue_name}", daemon=True)

    def start(self) -> None:
        ensure_queue(self._client)
        ensure_queue(self._poison)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stopping.set()
        with self._changed:
            self._changed.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)
        # Cancelling runs the done-callbacks now, which hand unstarted messages back to the queue.
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._changed:
            running = list(self._in_flight)
        wait(running, timeout=timeout)
        self._client.close()
        self._poison.close()

    def _poll(self) -> None:
        delay = MIN_POLL_SECONDS
        batch = self._options.batch_size
        while not self._stopping.is_set():
            with self._changed:
                self._changed.wait_for(
                    lambda: len(self._in_flight) <= self._options.new_batch_threshold or self._stopping.is_set()
                )
            if self._stopping.is_set():
                return
            received = 0
            try:
                # One receive request per poll, and each message handed over as it is read: a message is
                # never held back waiting for more, so slow storage delays nothing already received.
                pages = self._client.receive_messages(
                    messages_per_page=batch,
                    max_messages=batch,
                    visibility_timeout=RECEIVE_VISIBILITY_SECONDS,
                ).by_page()
                for message in next(pages, []):
                    self._submit(message)
                    received += 1
            except AzureError as error:
                log.warning("Polling queue '%s' failed: %s", self.queue_name, error)
            if received:
                delay = MIN_POLL_SECONDS
                continue
            self._stopping.wait(delay)
            delay = min(delay * 2, self._options.max_polling_interval)

    def _submit(self, message: QueueMessage) -> None:
        try:
            with self._changed:
                future = self._pool.submit(self._process, message)
                self._in_flight[future] = message
        except RuntimeError:  # stopping: the pool takes no more work; give the message back at once
            self._storage_call(
                "hand back", self._client.update_message, message.id, message.pop_receipt, visibility_timeout=0
            )
            return
        future.add_done_callback(self._finished)

    def _finished(self, future: Future[None]) -> None:
        with self._changed:
            message = self._in_flight.pop(future)
            self._changed.notify_all()
        if future.cancelled():
            self._storage_call(
                "hand back", self._client.update_message, message.id, message.pop_receipt, visibility_timeout=0
            )

    def _process(self, message: QueueMessage) -> None:
        if (message.dequeue_count or 0) > self._options.max_dequeue_count:
            self._to_poison(message)
            return
        try:
            body = decode_message(message.content, self._options.message_encoding)
        except ValueError as error:
            log.error("Queue '%s' message %s cannot be decoded: %s", self.queue_name, message.id, error)
            self._failed(message)
            return
        trigger_value = FunctionQueueMessage(
            id=message.id,
            body=body,
            dequeue_count=message.dequeue_count,
            expiration_time=message.expires_on,
            insertion_time=message.inserted_on,
            time_next_visible=message.next_visible_on,
            pop_receipt=message.pop_receipt,
        )
        try:
            self._invoker.invoke(self._function, trigger_value, f"New queue message detected on '{self.queue_name}'.")
        except BaseException:  # the invoker logged the traceback; the message is retried
            self._failed(message)
            return
        self._storage_call("delete", self._client.delete_message, message.id, message.pop_receipt)

    def _failed(self, message: QueueMessage) -> None:
        if (message.dequeue_count or 0) >= self._options.max_dequeue_count:
            self._to_poison(message)
            return
        visibility = round(self._options.visibility_timeout)
        self._storage_call(
            "release", self._client.update_message, message.id, message.pop_receipt, visibility_timeout=visibility
        )

    def _to_poison(self, message: QueueMessage) -> None:
        log.warning(
            "Message %s has reached MaxDequeueCount of %d. Moving message to queue '%s-poison'.",
            message.id,
            self._options.max_dequeue_count,
            self.queue_name,
        )
        # The original text, so the poison message decodes exactly like the one that failed.
        if self._storage_call("poison", self._poison.send_message, message.content):
            self._storage_call("delete", self._client.delete_message, message.id, message.pop_receipt)

    def _storage_call(self, what: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
        """Run a storage call; on failure log and carry on: the message reappears after its visibility."""
        try:
            call(*args, **kwargs)
        except AzureError as error:
            log.warning("Queue '%s': could not %s a message: %s", self.queue_name, what, error)
            return False
        return True
