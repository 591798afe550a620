"""The pipeline's two queues, both Base64 text (the Functions host's default `messageEncoding`, `base64_text`), every
message after a hidden copy of it, its *watchdog*, which whoever handles the message takes over, renews while it
works and deletes at the end (shared/leases.py): a host dying with a message in hand hides its work for seconds, not
for the host's ten-minute receive visibility. The timings are the settings' (shared/timings.py).

The dispatch queue (`DispatchQueue`): the minute timer puts one message per (minute bucket, shard) here, and the
queue-triggered dispatcher handles each on whichever instance takes it. The lifecycle queues a collection's
cascade here too (`send_kept`; shared/dispatch_trigger.py routes the trigger's messages).
- A message is `{"bucket": "YYYYMMDDHHMM", "shard": n}` (plus `"account": a` for a storage account other than the
  primary, `"w": [message id, pop receipt]` naming its watchdog, and, with telemetry on, `"tp"`: the W3C
  traceparent of the tick that sent it). Handling one is idempotent (entries already dispatched are gone, stale ones
  are dropped), so a duplicate or a redelivery after a crash costs one partition query and changes nothing.
- A task sent `guarded` is preceded by its watchdog, visible `task_watchdog_after` later (10 s), renewed every
  `renew_every` while its handler lives: long enough for a busy handler to take it over, short enough that the minute
  a dead host was dispatching ahead is dispatched well before it begins. A cascade task is always sent so
  (`send_kept`), and guarded the same way while it runs: both kinds are a `WatchedTask`.

The occurrence queue (`OccurrenceQueue`): the dispatcher and the API put occurrences here; the queue trigger runs
them.
- Each message carries an occurrence batch (shared/occurrence) and is made visible `early_visibility` before its due
  second (5 s; a herd's batch, HERD_ITEMS or more of one second, `herd_visibility`, 6.5 s): the trigger's poller
  (which backs off to its maxPollingInterval on an empty queue) finds it, and the executor reads the jobs and claims
  a herd of a thousand (two storage round trips each, side by side) before the second; then it sleeps off the rest.
  The queue caps visibility at 7 days; a message due later runs early, sees that, and is sent again for the rest
  (see executor).
- Every batch due within those 7 days is preceded by its watchdog, visible `watchdog_after` past the batch's (first)
  second (`watchdog_margin` after the claims' leases would run out unrenewed, claims.py, so whoever receives it finds
  them expired), whose receipt the batch carries. Its first delivery takes the copy over, so it costs what a
  watchdog sent by the executor costs, and it also covers the time before any worker holds the batch: a receive
  whose answer was lost hides the batch for the host's ten minutes, but not its watchdog. The watchdog's own
  receive may be lost too; so before it goes a *backstop*, a second copy visible `backstop_after` past the batch's
  second (well after the watchdog would have run the batch, well inside the minute a batch whose receive and whose
  watchdog's receive were both lost may wait, issue 23), which the batch and the watchdog both name and whichever
  delivery runs the batch deletes at its end. Two lost receives in a row cost a batch `backstop_after`, not ten
  minutes. A batch costs three sends (backstop, watchdog, batch) and, at its end, two deletes besides the host's own.
"""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from azure.core.exceptions import ResourceExistsError
from azure.storage.queue import TextBase64DecodePolicy, TextBase64EncodePolicy

from ..occurrence import OccurrenceBatch, OccurrenceMessage
from ..telemetry.propagation import current_traceparent
from ..timings import Timings
from .queue_client import MessageQueue

Sendable = OccurrenceMessage | OccurrenceBatch

MAX_VISIBILITY = timedelta(days=7) - timedelta(minutes=1)


def base64_text() -> dict[str, Any]:
    """QueueClient keywords (also through `QueueServiceClient.get_queue_client`) for Base64 text messages,
    host.json's `messageEncoding`; the SDK sets a client's encoding only when the client is made."""
    return {"message_encode_policy": TextBase64EncodePolicy(), "message_decode_policy": TextBase64DecodePolicy()}


def watchdog_delay(batch: OccurrenceBatch, now: datetime, timings: Timings) -> float:
    """Seconds from `now` that a batch's watchdog stays hidden: `watchdog_after` past its (first) second, or past
    now when that has gone (where the claims' leases then end, plus the watchdog's margin: leases.py)."""
    return (max(batch.due, now) + timings.watchdog_after - now).total_seconds()


def backstop_delay(batch: OccurrenceBatch, now: datetime, timings: Timings) -> float:
    """Seconds from `now` that a batch's backstop stays hidden: `backstop_after` past its (first) second or now."""
    return (max(batch.due, now) + timings.backstop_after - now).total_seconds()


class _Copies:
    """What both queues do with a message they hold a receipt of: a watchdog or backstop copy, or a task."""

    client: MessageQueue

    def hide(self, receipt: Receipt, seconds: float) -> Receipt:
        """Push a hidden message's visibility `seconds` from now; its new receipt."""
        updated = self.client.update_message(receipt.id, receipt.pop_receipt, visibility_timeout=_whole(seconds))
        return Receipt(receipt.id, updated.pop_receipt)

    def delete(self, receipt: Receipt) -> None:
        self.client.delete_message(receipt.id, receipt.pop_receipt)


class OccurrenceQueue(_Copies):
    def __init__(self, client: MessageQueue, poison: MessageQueue, timings: Timings) -> None:
        """Both Base64 text queues (`base64_text()` for azure QueueClients; storage.py)."""
        self.client = client
        self.poison_client = poison
        self.timings = timings

    def ensure_exists(self) -> None:
        for client in (self.client, self.poison_client):
            with contextlib.suppress(ResourceExistsError):
                client.create_queue()

    def poison(self, text: str) -> None:
        """Park a message we cannot read where the Functions host parks failing ones: `<queue>-poison`."""
        self.poison_client.send_message(text, time_to_live=-1)

    def send(self, message: Sendable, now: datetime) -> None:
        """Enqueue, visible just before `message.due` (at once when that has passed), never expiring; within
        7 days, after its backstop and its watchdog (the batch names both)."""
        batch = message.bare() if isinstance(message, OccurrenceBatch) else OccurrenceBatch((message,))
        early = self.timings.herd_visibility if batch.herd else self.timings.early_visibility
        delay = min(max(batch.due - now - early, timedelta(0)), MAX_VISIBILITY)
        # A batch due beyond 7 days hops back (executor) and is sent anew, with its copies, nearer its second.
        hidden = backstop_delay(batch, now, self.timings)
        if hidden <= MAX_VISIBILITY.total_seconds():
            backstop = self.send_hidden(batch, hidden).reference()
            watchdog_in = watchdog_delay(batch, now, self.timings)
            watchdog = self.send_hidden(replace(batch, backstop=backstop), watchdog_in).reference()
            batch = replace(batch, watchdog=watchdog, backstop=backstop)
        self.client.send_message(batch.to_json(), visibility_timeout=int(delay.total_seconds()), time_to_live=-1)

    def send_hidden(self, message: Sendable, seconds: float) -> Receipt:
        """Enqueue a copy visible only after `seconds` (a watchdog, see shared/leases.py); its receipt."""
        sent = self.client.send_message(message.to_json(), visibility_timeout=_whole(seconds), time_to_live=-1)
        return Receipt(sent.id, sent.pop_receipt)


@dataclass(frozen=True)
class Receipt:
    id: str
    pop_receipt: str | None  # as the SDK types it; the service returns one for every send and update

    def reference(self) -> tuple[str, str] | None:
        """How a message names this one ("w", "b"); None without a pop receipt (then it cannot be taken over)."""
        return (self.id, self.pop_receipt) if self.pop_receipt else None


def _whole(seconds: float) -> int:
    # The queue counts visibility in whole seconds: round up, never make a message visible early.
    return min(max(math.ceil(seconds), 0), int(MAX_VISIBILITY.total_seconds()))


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


class DispatchQueue(_Copies):
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
