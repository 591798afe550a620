"""A shard's occurrences due within the batch span (shared/timings.py `batch_span`) of each other share one queue
message (a steady load spread over the seconds then costs a message, a watchdog and a backstop per few seconds, not
per second), up to BATCH_MAX each; a same-second herd is still cut into messages of BATCH_MAX, and every occurrence
keeps its own second."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from shared.dispatcher import Dispatcher
from shared.keys import JobKey
from shared.occurrence import BATCH_MAX, OccurrenceBatch, OccurrenceMessage, batches
from shared.occurrence.batch import SPANNED_MAX
from shared.runtime import Runtime
from shared.store.queues import OccurrenceQueue, Sendable
from tests.support.scheduler_client import call, make_collection

SECOND = datetime(2026, 11, 26, 1, 0, 0, tzinfo=UTC)
HTTP_ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


def _message(n: int, offset: int) -> OccurrenceMessage:
    due = SECOND + timedelta(seconds=offset)
    return OccurrenceMessage(JobKey("s", "rg", "jc", f"job{n}"), due, due)


def test_occurrences_within_the_span_share_a_message_and_a_herd_is_cut_at_batch_max() -> None:
    herd = [_message(n, 0) for n in range(2 * BATCH_MAX + 50)]
    later = [_message(300, 1), _message(301, 3), _message(302, 4)]
    spanned = list(batches(later[::-1] + herd, timedelta(seconds=3)))
    assert [len(b.items) for b in spanned] == [BATCH_MAX, BATCH_MAX, 52, 1]
    assert spanned[2].due == SECOND and spanned[2].last_due == SECOND + timedelta(seconds=3)
    assert [m.job.job for m in spanned[0].items[:3]] == ["job0", "job1", "job2"]  # a second keeps its order
    # No span: a message per second, as before.
    assert [len(b.items) for b in batches(herd + later)] == [BATCH_MAX, BATCH_MAX, 50, 1, 1, 1]


def test_a_message_spanning_seconds_holds_at_most_spanned_max() -> None:
    # A steady 300 a second over 8 shards: about 38 a second per shard, 150 in a span of 4 seconds.
    steady = [_message(n, n % 4) for n in range(150)]
    cut = list(batches(steady, timedelta(seconds=3)))
    assert [len(b.items) for b in cut] == [SPANNED_MAX, 150 - SPANNED_MAX]
    assert not any(b.herd for b in cut)  # visible early_visibility before, as a steady load's messages are


class _SentQueue(OccurrenceQueue):
    def __init__(self, inner: OccurrenceQueue) -> None:
        self.__dict__.update(inner.__dict__)
        self.sent: list[OccurrenceBatch] = []

    def send(self, message: Sendable, now: datetime) -> None:
        assert isinstance(message, OccurrenceBatch)
        self.sent.append(message)
        super().send(message, now)


def test_a_tick_queues_a_shards_spread_seconds_in_messages_of_batch_span(settings, clock, storage) -> None:
    rt = Runtime.create(dataclasses.replace(settings, due_shards=1), clock, storage=storage)
    make_collection(rt)
    first = clock.now().replace(second=0, microsecond=0) + timedelta(minutes=2, seconds=10)
    per_message = int(rt.settings.timings.batch_span.total_seconds()) + 1
    for n in range(2 * per_message):
        due = first + timedelta(seconds=n)
        body = {"properties": {"startTime": due.isoformat(), "action": HTTP_ACTION}}
        assert call(rt, "Jobs_CreateOrUpdate", "PUT", f"job{n}", body).status == 201
    queue = _SentQueue(rt.store.queue)
    clock.advance(timedelta(minutes=1))
    assert Dispatcher(dataclasses.replace(rt.store, queue=queue), clock).tick().enqueued == 2 * per_message
    assert [len(batch.items) for batch in queue.sent] == [per_message, per_message]
    assert [batch.due for batch in queue.sent] == [first, first + timedelta(seconds=per_message)]
    assert sorted(m.due for batch in queue.sent for m in batch.items) == [
        first + timedelta(seconds=n) for n in range(2 * per_message)
    ]  # each at its own second
