"""The dispatch queue: the minute timer puts one message per (minute bucket, shard) here, and the
queue-triggered dispatcher handles each on whichever instance takes it. The lifecycle queues a collection's
cascade here too (`send_text`; shared/lifecycle/cascade.py routes the trigger's messages).

A message is `{"bucket": "YYYYMMDDHHMM", "shard": n}` (plus `"account": a` for a storage account other than the
primary, and, with telemetry on, `"tp"`: the W3C traceparent of
the tick that sent it), Base64 like every queue the app triggers on.
Handling one is idempotent (entries already dispatched are gone, stale ones are dropped), so a
duplicate or a redelivery after a crash costs one partition query and changes nothing.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field

from azure.core.exceptions import ResourceExistsError
from azure.storage.queue import QueueClient

from ..telemetry.propagation import current_traceparent


class MalformedTask(ValueError):
    """A dispatch message that is not a bucket and a shard."""


@dataclass(frozen=True)
class ShardTask:
    bucket: str
    shard: int
    traceparent: str | None = field(default=None, compare=False)  # the sending tick's, when read from a message
    account: int = 0  # whose due index (shared/store/routing.py); 0, the primary, is left out of the message

    def to_json(self) -> str:
        traceparent = current_traceparent() or self.traceparent
        extra = ({"account": self.account} if self.account else {}) | ({"tp": traceparent} if traceparent else {})
        return json.dumps({"bucket": self.bucket, "shard": self.shard, **extra}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ShardTask:
        try:
            data = json.loads(text)
            bucket, shard, account = data["bucket"], data["shard"], data.get("account", 0)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise MalformedTask(str(exc)) from exc
        if not (isinstance(bucket, str) and len(bucket) == 12 and bucket.isdigit()
                and isinstance(shard, int) and 0 <= shard < 100 and isinstance(account, int) and 0 <= account < 100):
            raise MalformedTask(f"not a bucket, shard and account: {text[:100]!r}")
        return cls(bucket, shard, data["tp"] if isinstance(data.get("tp"), str) else None, account)


class DispatchQueue:
    def __init__(self, client: QueueClient) -> None:
        self.client = client  # made with queue.base64_text(), as the occurrence queue's

    def ensure_exists(self) -> None:
        with contextlib.suppress(ResourceExistsError):
            self.client.create_queue()

    def send(self, task: ShardTask) -> None:
        # An hour to live: a task nobody took by then is not lost, because every tick also sweeps the
        # buckets behind its window for entries left there (Dispatcher.fan_out).
        self.client.send_message(task.to_json(), time_to_live=3600)

    def send_text(self, text: str) -> None:
        """Another kind of task for the dispatch trigger (a collection's cascade, shared/lifecycle/cascade.py):
        kept until handled (no time to live), since nothing else would redo it."""
        self.client.send_message(text, time_to_live=-1)
