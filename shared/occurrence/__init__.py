"""Occurrences on their way to execution: each occurrence's deterministic identity, the queue message of one
attempt, and the batch one queue message carries.

- identity.py: `Trigger` and `execution_id`, the same for every delivery of one occurrence.
- message.py: `OccurrenceMessage` (one attempt of one occurrence), `PollState`, `MalformedMessage`.
- batch.py: `OccurrenceBatch` (what a queue message carries, with its watchdog and backstop), `batches`,
  `BATCH_MAX`.

Every public name of the three is importable from here, as before they were split.
"""

from .batch import BATCH_MAX, HERD_ITEMS, OccurrenceBatch, batches
from .identity import Trigger, execution_id
from .message import MalformedMessage, OccurrenceMessage, PollState

__all__ = [
    "BATCH_MAX",
    "HERD_ITEMS",
    "MalformedMessage",
    "OccurrenceBatch",
    "OccurrenceMessage",
    "PollState",
    "Trigger",
    "batches",
    "execution_id",
]
