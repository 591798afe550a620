"""The occurrence queue: the dispatcher and the API put occurrences here; the queue trigger runs them.

Messages are Base64, the Functions host's default `messageEncoding`. Each carries an occurrence batch
(shared/occurrence.py) and is made visible `early_visibility` before its due second (5 s; the timings are the
settings', shared/timings.py): the trigger's poller (which backs off to its maxPollingInterval on an empty queue)
finds it, and the executor reads the jobs and claims a herd of a thousand (two storage round trips each, side by
side) before the second; then it sleeps off the rest. The queue caps visibility at 7 days; a message due later
runs early, sees that, and is sent again for the rest (see executor).

Every batch due within those 7 days is preceded by its watchdog (shared/leases.py): a hidden copy, visible
`watchdog_after` past the batch's (first) second (`watchdog_margin` after the claims' leases would run out
unrenewed, claims.py, so whoever receives it finds them expired), whose receipt the batch carries. Its first
delivery takes the copy over (renews it while it runs, deletes it at the end), so it costs what a watchdog sent by
the executor costs, and it also covers the time before any worker holds the batch: a receive whose answer was
lost hides the batch for the host's ten minutes, but not its watchdog. The watchdog's own receive may be lost too;
so before it goes a *backstop*, a second copy visible `backstop_after` past the batch's second (well after the
watchdog would have run the batch, well inside the minute a batch whose receive and whose watchdog's receive were
both lost may wait, issue 23), which the batch and the watchdog both name and whichever delivery runs the batch
deletes at its end. Two lost receives in a row cost a batch `backstop_after`, not ten minutes. A batch costs three
sends (backstop, watchdog, batch) and, at its end, two deletes besides the host's own.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from azure.core.exceptions import ResourceExistsError
from azure.storage.queue import TextBase64DecodePolicy, TextBase64EncodePolicy

from ..occurrence import OccurrenceBatch, OccurrenceMessage
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


class OccurrenceQueue:
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
        delay = min(max(batch.due - now - self.timings.early_visibility, timedelta(0)), MAX_VISIBILITY)
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

    def hide(self, receipt: Receipt, seconds: float) -> Receipt:
        """Push a hidden message's visibility `seconds` from now; its new receipt."""
        updated = self.client.update_message(receipt.id, receipt.pop_receipt, visibility_timeout=_whole(seconds))
        return Receipt(receipt.id, updated.pop_receipt)

    def delete(self, receipt: Receipt) -> None:
        self.client.delete_message(receipt.id, receipt.pop_receipt)


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
