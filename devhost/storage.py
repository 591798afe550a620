"""Queue storage access shared by the queue trigger and the queue output binding.

Contracts: clients send and receive message text exactly as stored (no SDK encode/decode policy), because
the host's `messageEncoding` decides the wire form: `encode_message` / `decode_message` implement it
("base64": Base64 of the bytes; "none": the UTF-8 text itself). `ensure_queue` creates a queue if missing.
"""

from __future__ import annotations

import base64
import binascii
import contextlib

from azure.core.exceptions import ResourceExistsError
from azure.storage.queue import LinearRetry, QueueClient


def queue_client(connection_string: str, queue_name: str) -> QueueClient:
    # Few, quick retries: a local host should report a missing Azurite promptly and stop without delay. The
    # queue SDK takes its backoff from a retry_policy object only (retry_backoff_factor is ignored).
    return QueueClient.from_connection_string(
        connection_string, queue_name, retry_policy=LinearRetry(backoff=0.5, random_jitter_range=0.25, retry_total=2),
        connection_timeout=5, read_timeout=10,
    )


def ensure_queue(client: QueueClient) -> None:
    with contextlib.suppress(ResourceExistsError):
        client.create_queue()


def encode_message(body: str | bytes, encoding: str) -> str:
    """Message text to store for a payload, per host.json messageEncoding."""
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    if encoding == "base64":
        return base64.b64encode(data).decode("ascii")
    return data.decode("utf-8")


def decode_message(text: str, encoding: str) -> bytes:
    """Payload bytes of a stored message; raises ValueError when base64 text is not valid Base64."""
    if encoding != "base64":
        return text.encode("utf-8")
    try:
        # .NET's Convert.FromBase64String tolerates whitespace but nothing else outside the alphabet.
        return base64.b64decode("".join(text.split()), validate=True)
    except binascii.Error as error:
        raise ValueError(f"message is not valid Base64 (host.json messageEncoding is base64): {error}") from error
