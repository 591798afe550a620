"""Queue output bindings (`@app.queue_output`): what a successful invocation set is sent to its queue.

Contract: `QueueOutputs.deliver(function, values)` sends, for each queue output binding present in `values`
(binding name -> value set via `func.Out` or returned for `$return`), the message(s) it holds: str, bytes,
`func.QueueMessage`, or an iterable of those; anything else raises TypeError. The queue is created on
first use, like the binding does. It runs only after the function succeeded, so failed invocations
send nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

import azure.functions as func
from azure.storage.queue import QueueClient

from devhost.indexing import FunctionInfo
from devhost.settings import resolve_references, storage_connection
from devhost.storage import encode_message, ensure_queue, queue_client


def _payloads(value: Any) -> list[str | bytes]:
    if isinstance(value, str | bytes):
        return [value]
    if isinstance(value, func.QueueMessage):
        return [value.get_body()]
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        items = list(value)
        if all(isinstance(item, str | bytes | func.QueueMessage) for item in items):
            return [payload for item in items for payload in _payloads(item)]
    raise TypeError(f"a queue output takes str, bytes, func.QueueMessage or a list of them, not {type(value)}")


class QueueOutputs:
    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._clients: dict[tuple[str, str], QueueClient] = {}
        self._lock = threading.Lock()

    def _client(self, connection: str | None, queue_name: str) -> QueueClient:
        key = (storage_connection(connection), resolve_references(queue_name))
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = queue_client(*key)
                ensure_queue(client)
                self._clients[key] = client
            return client

    def deliver(self, function: FunctionInfo, values: Mapping[str, Any]) -> None:
        for binding in function.outputs:
            if binding.type != "queue" or values.get(binding.name) is None:
                continue
            payloads = _payloads(values[binding.name])
            client = self._client(binding.connection, binding.queue_name or "")
            for payload in payloads:
                client.send_message(encode_message(payload, self._encoding))

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
