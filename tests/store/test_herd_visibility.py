"""A herd's messages turn visible `herd_visibility` before their second, the others `early_visibility` before it
(shared/store/queues.py `OccurrenceQueue.send`), and a full batch of the longest names still fits one message.

On the memory queue and a manual clock (the queue's contract tests hold it to Azurite's answers): a message sent
with a visibility of whole seconds is received from then on, and not a moment before.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.keys import JobKey
from shared.manual_clock import ManualClock
from shared.occurrence import BATCH_MAX, HERD_ITEMS, OccurrenceBatch, OccurrenceMessage, batches
from shared.store.memory import MemoryStorage
from shared.store.queues import OccurrenceQueue
from shared.timings import Timings

NOW = datetime(2026, 11, 30, 3, 0, 0, tzinfo=UTC)
DUE = NOW + timedelta(seconds=20)


def _queue(clock: ManualClock) -> OccurrenceQueue:
    storage = MemoryStorage(clock)
    queue = OccurrenceQueue(storage.queue("occurrences"), storage.queue("occurrences-poison"), Timings())
    queue.ensure_exists()
    return queue


def _batch(count: int, name: str = "job", due: datetime = DUE) -> OccurrenceBatch:
    keys = [JobKey("s", "rg", "c", f"{name}{n}") for n in range(count)]
    return OccurrenceBatch(tuple(OccurrenceMessage(key, due, due) for key in keys))


def _visible(queue: OccurrenceQueue) -> list[int]:
    """The sizes of the batches received now (each hidden again for a minute)."""
    received = queue.client.receive_messages(visibility_timeout=60)
    return sorted(len(OccurrenceBatch.from_json(m.content).items) for m in received)


def test_a_herds_message_turns_visible_herd_visibility_early_and_the_others_early_visibility_early() -> None:
    clock = ManualClock(NOW)
    queue = _queue(clock)
    timings = queue.timings
    queue.send(_batch(HERD_ITEMS), clock.now())
    queue.send(_batch(HERD_ITEMS - 1, "few"), clock.now())
    # The queue cuts a visibility to whole seconds: 13.5 s -> 13 s, 15 s -> 15 s.
    herd_at = NOW + timedelta(seconds=int((DUE - NOW - timings.herd_visibility).total_seconds()))
    others_at = NOW + timedelta(seconds=int((DUE - NOW - timings.early_visibility).total_seconds()))
    assert DUE - herd_at > timings.early_visibility + timedelta(seconds=1)  # the herd's lead is its own
    assert DUE - herd_at < timings.early_hop  # and it never hops
    clock.current = herd_at - timedelta(milliseconds=10)
    assert _visible(queue) == []
    clock.current = herd_at
    assert _visible(queue) == [HERD_ITEMS]
    clock.current = others_at - timedelta(milliseconds=10)
    assert _visible(queue) == []
    clock.current = others_at
    assert _visible(queue) == [HERD_ITEMS - 1]


def test_a_full_batch_of_the_longest_names_is_cut_to_fit_one_message() -> None:
    clock = ManualClock(NOW)
    queue = _queue(clock)
    # The API's longest names (shared/api/paths.py): subscription and resource group 90 characters, a collection
    # and a job 100.
    keys = [JobKey("s" * 90, "r" * 90, "c" * 100, f"j{n:099d}") for n in range(2 * BATCH_MAX)]
    herd = [OccurrenceMessage(key, DUE, DUE) for key in keys]
    cut = list(batches(herd))
    assert len(cut) > 2 and all(len(b.items) < BATCH_MAX for b in cut)  # cut by bytes, not by count
    for batch in cut:
        queue.send(batch, clock.now())  # the memory queue refuses a message over 64 KiB, as the service does
    clock.current = DUE
    assert sum(_visible(queue)) == 2 * BATCH_MAX
