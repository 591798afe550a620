"""The dispatch queue: the minute timer puts one message per (minute bucket, shard) here, and the
queue-triggered dispatcher handles each on whichever instance takes it. The lifecycle queues a collection's
cascade here too (`send_kept`; shared/dispatch_trigger.py routes the trigger's messages).

A message is `{"bucket": "YYYYMMDDHHMM", "shard": n}` (plus `"account": a` for a storage account other than the
primary, `"w": [message id, pop receipt]` naming its watchdog, and, with telemetry on, `"tp"`: the W3C
traceparent of the tick that sent it), Base64 like every queue the app triggers on.
Handling one is idempotent (entries already dispatched are gone, stale ones are dropped), so a
duplicate or a redelivery after a crash costs one partition query and changes nothing.

A task sent `guarded` is preceded by its watchdog: a hidden copy, visible `task_watchdog_after` later (10 s; the
timings are the settings', shared/timings.py), that the task's handler takes over (shared/leases.py) and renews
every `renew_every` while it lives: long enough for a busy handler to take it over, short enough that the minute a
dead host was dispatching ahead is dispatched well before it begins; so a host dying with the task in hand hides
its entries for seconds, not for the host's ten-minute receive visibility. A cascade task is always sent so
(`send_kept`), and guarded the same way while it runs: both kinds are a `WatchedTask`.
"""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass, field, replace
from typing import Protocol

from azure.core.exceptions import ResourceExistsError

from ..telemetry.propagation import current_traceparent
from ..timings import Timings
from .queue import Receipt
from .queue_client import MessageQueue


class MalformedTask(ValueError):
    """A dispatch message that is not a bucket and a shard."""


class WatchedTask(Protocol):
    """A task of this queue that may name its watchdog ("w"): a shard's dispatch (`ShardTask`) or a collection's
    cascade (shared/lifecycle/cascade.py). What `send_hidden` copies and shared/leases.py `TaskWatchdogs`
    guards."""

    @property
    def watchdog(self) -> tuple[str, str] | None: ...

    def with_watchdog(self, watchdog: tuple[str, str] | None) -> WatchedTask:
        """The same task naming `watchdog` (None: naming none, a watchdog's own content)."""
        ...

    def to_json(self) -> str: ...


def named_watchdog(value: object) -> tuple[str, str] | None:
    """The watchdog a message's "w" names; None when it names none or none readable (its handler sends one)."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(part, str) and part for part in value):
        return (value[0], value[1])
    return None


@dataclass(frozen=True)
class ShardTask:
    bucket: str
    shard: int
    traceparent: str | None = field(default=None, compare=False)  # the sending tick's, when read from a message
    account: int = 0  # whose due index (shared/store/routing.py); 0, the primary, is left out of the message
    watchdog: tuple[str, str] | None = field(default=None, compare=False)  # (message id, pop receipt)

    def to_json(self) -> str:
        traceparent = current_traceparent() or self.traceparent
        extra = (
            ({"account": self.account} if self.account else {})
            | ({"tp": traceparent} if traceparent else {})
            | ({"w": list(self.watchdog)} if self.watchdog else {})
        )
        return json.dumps({"bucket": self.bucket, "shard": self.shard, **extra}, separators=(",", ":"))

    def with_watchdog(self, watchdog: tuple[str, str] | None) -> ShardTask:
        return replace(self, watchdog=watchdog)

    def __str__(self) -> str:
        return f"bucket {self.bucket} shard {self.shard}" + (f" account {self.account}" if self.account else "")

    @classmethod
    def from_json(cls, text: str) -> ShardTask:
        try:
            data = json.loads(text)
            bucket, shard, account = data["bucket"], data["shard"], data.get("account", 0)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise MalformedTask(str(exc)) from exc
        if not (
            isinstance(bucket, str)
            and len(bucket) == 12
            and bucket.isdigit()
            and isinstance(shard, int)
            and 0 <= shard < 100
            and isinstance(account, int)
            and 0 <= account < 100
        ):
            raise MalformedTask(f"not a bucket, shard and account: {text[:100]!r}")
        tp = data["tp"] if isinstance(data.get("tp"), str) else None
        return cls(bucket, shard, tp, account, named_watchdog(data.get("w")))


class DispatchQueue:
    def __init__(self, client: MessageQueue, timings: Timings) -> None:
        self.client = client  # made with queue.base64_text(), as the occurrence queue's
        self.watchdog_after = timings.task_watchdog_after.total_seconds()
        # A task nobody took by then is not lost: every tick also sweeps the buckets behind its window for entries
        # left there (Dispatcher.fan_out).
        self.time_to_live = math.ceil(timings.dispatch_task_ttl.total_seconds())

    def ensure_exists(self) -> None:
        with contextlib.suppress(ResourceExistsError):
            self.client.create_queue()

    def send(self, task: ShardTask, guarded: bool = True, delay: float = 0.0) -> None:
        """Enqueue a task, visible after `delay` seconds; `guarded`: after its watchdog, which the task names
        (visible `task_watchdog_after` after the task)."""
        if guarded:
            watchdog = self.send_hidden(task, delay + self.watchdog_after).reference()
            task = task.with_watchdog(watchdog)
        self.client.send_message(
            task.to_json(), visibility_timeout=math.ceil(delay) or None, time_to_live=self.time_to_live
        )

    def send_hidden(self, task: WatchedTask, seconds: float) -> Receipt:
        """A copy of the task (naming no watchdog) visible only after `seconds`: a watchdog; its receipt. It
        carries the queue's time to live, a cascade task's too (`send_kept` says why that is harmless)."""
        sent = self.client.send_message(
            task.with_watchdog(None).to_json(),
            visibility_timeout=math.ceil(seconds),
            time_to_live=self.time_to_live,
        )
        return Receipt(sent.id, sent.pop_receipt)

    def hide(self, receipt: Receipt, seconds: float) -> Receipt:
        updated = self.client.update_message(receipt.id, receipt.pop_receipt, visibility_timeout=math.ceil(seconds))
        return Receipt(receipt.id, updated.pop_receipt)

    def delete(self, receipt: Receipt) -> None:
        self.client.delete_message(receipt.id, receipt.pop_receipt)

    def send_kept(self, task: WatchedTask) -> None:
        """Another kind of task for the dispatch trigger (a collection's cascade, shared/lifecycle/cascade.py),
        after its watchdog, which it names (visible `task_watchdog_after` after the task). The task is kept until
        handled (no time to live), since nothing else would redo it. Its watchdog, and any a handler sends, carry
        the queue's time to live: one that expires loses nothing, because a copy only ever stands in for a task
        still on the queue (the trigger deletes a task once handled, and a handled page queues the next page
        first), which turns visible again when the receive of the host that died holding it runs out. So a host
        down longer than the time to live finds its cascade done by that task's redelivery, as before watchdogs."""
        watchdog = self.send_hidden(task, self.watchdog_after).reference()
        self.client.send_message(task.with_watchdog(watchdog).to_json(), time_to_live=-1)
