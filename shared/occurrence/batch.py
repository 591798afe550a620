"""What one queue message carries: `OccurrenceBatch`, occurrences due at the same second (usually), run side by
side; `batches` cuts the occurrences the dispatcher queues into them.

The dispatcher puts up to BATCH_MAX occurrences due at the same second into one message (a same-second herd costs
one message per hundred, not one each); a batch of one (a retry, an error action, run-now, the API's own dispatch)
is written in the single-occurrence format `{"v": 1, ...}` (message.py), and a batch of several as
`{"v": 2, "items": [...]}` of the same objects.

A batch may name its watchdog (optional `"w": [message id, pop receipt]`): a hidden copy that whoever queued
the batch sent just before it (store/queues.py), which the batch's first delivery takes over as its own
(shared/leases.py). It exists before any worker has received the batch, so a batch whose receive was lost
on its way to a worker (the queue hides it for the receive's ten minutes) still runs seconds late, not ten
minutes late. A batch and its watchdog may also name a backstop (optional `"b"`, the same shape): a second
hidden copy, later than the watchdog, for when the watchdog's own receive is lost too. An unreadable reference
reads as none; anything else unreadable raises MalformedMessage.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from .message import MalformedMessage, OccurrenceMessage, compact_json

# Occurrences per queue message of one second. Not the 100 an entity-group transaction takes (claims, renewals and
# records are grouped per transaction apart from the batch): a herd's messages must all be in a host's hands before
# their second, and the host fetches more only while it holds at most newBatchThreshold (48, host.json) messages, so
# a herd of 5,000 in messages of 100 (8 shards x 7 = 56) left 7 waiting for the first batches to end, 5-7 s late.
# In messages of 160 it is 8 x 4 (bench names) to 8 x 5 (an occurrence of about 300 bytes with its traceparent:
# BATCH_BYTES binds first), 32-40 messages.
BATCH_MAX = 160
# Occurrences per message spanning several seconds (a steady load, `batch_span`): 100, as before messages of one
# second grew to BATCH_MAX. Under a backlog a process holds 80 messages at once and renews every claim they hold:
# spanned messages of 160 (at 300 executions/s, 150 each) would have it hold half as many claims again.
SPANNED_MAX = 100
# A batch of this many occurrences or more, all due at one second, is a herd's: it turns visible `herd_visibility`
# before its second, not `early_visibility` (store/queues.py), so its thousands of jobs are read and claimed before it.
HERD_ITEMS = 100
BATCH_BYTES = 40_000  # the JSON of one message at most: Base64 makes 53,334 of it, under 65,536


@dataclass(frozen=True)
class OccurrenceBatch:
    """What one queue message carries: occurrences due at the same second (usually), run side by side."""

    items: tuple[OccurrenceMessage, ...]
    watchdog: tuple[str, str] | None = None  # (message id, pop receipt) of the copy sent before it
    backstop: tuple[str, str] | None = None  # the same, of the later copy that stands in for a lost watchdog

    def __post_init__(self) -> None:
        if not self.items:
            raise ValueError("a batch holds at least one occurrence")

    @property
    def due(self) -> datetime:
        """When the batch's first occurrence is due: the message turns visible just before it."""
        return min(item.due for item in self.items)

    @property
    def herd(self) -> bool:
        """A herd's batch: HERD_ITEMS occurrences or more, all due at one second."""
        return len(self.items) >= HERD_ITEMS and self.due == self.last_due

    @property
    def last_due(self) -> datetime:
        return max(item.due for item in self.items)

    def to_json(self) -> str:
        data = (
            {"v": 1, **self.items[0].fields()}
            if len(self.items) == 1
            else {"v": 2, "items": [item.fields() for item in self.items]}
        )
        if self.watchdog is not None:
            data["w"] = list(self.watchdog)
        if self.backstop is not None:
            data["b"] = list(self.backstop)
        return compact_json(data)

    def without_watchdog(self) -> OccurrenceBatch:
        """The watchdog's content: the batch, naming its backstop (so a delivery of the watchdog ends it too)."""
        return replace(self, watchdog=None)

    def bare(self) -> OccurrenceBatch:
        """The occurrences alone, naming no copy (what a sender starts from, and the backstop's content)."""
        return replace(self, watchdog=None, backstop=None)

    @classmethod
    def from_json(cls, text: str | bytes) -> OccurrenceBatch:
        try:
            data = json.loads(text)
            version = data.get("v") if isinstance(data, dict) else None
            if version == 1:
                items = [data]
            elif version == 2 and isinstance(data.get("items"), list) and data["items"]:
                items = data["items"]
            else:
                raise ValueError(f"unknown message version {version!r} or no items")
        except (ValueError, TypeError) as exc:
            raise MalformedMessage(f"not an occurrence message: {exc}") from exc
        return cls(
            tuple(OccurrenceMessage.from_fields(item) for item in items),
            _watchdog(data.get("w")),
            _watchdog(data.get("b")),
        )


def batches(messages: Iterable[OccurrenceMessage], span: timedelta = timedelta(0)) -> Iterator[OccurrenceBatch]:
    """Messages in due order, each batch's occurrences due within `span` of its first (0: at the same instant): at
    most BATCH_MAX of one second, SPANNED_MAX once it spans more, and BATCH_BYTES of JSON."""
    batch: list[OccurrenceMessage] = []
    size = 0
    for message in sorted(messages, key=lambda m: m.due):  # stable: a second's occurrences keep their order
        length = len(message.to_json()) + 1
        spans = bool(batch) and message.due != batch[0].due  # in due order: a batch that spans ends later
        full = len(batch) >= (SPANNED_MAX if spans else BATCH_MAX)
        if batch and (full or size + length > BATCH_BYTES or message.due - batch[0].due > span):
            yield OccurrenceBatch(tuple(batch))
            batch, size = [], 0
        batch.append(message)
        size += length
    if batch:
        yield OccurrenceBatch(tuple(batch))


def _watchdog(value: Any) -> tuple[str, str] | None:
    # An unreadable reference only costs the delivery a watchdog of its own: never a reason to poison.
    if isinstance(value, list) and len(value) == 2 and all(isinstance(part, str) and part for part in value):
        return value[0], value[1]
    return None
