"""Occurrences queued for a definition since replaced (a PUT, a PATCH, a disable's cascade) are dropped before
they claim, each named in the ledger (JobChanged), and the batch's others run: the dropped ones' entries are
written together, one write for the batch, so that a redefined or disabled collection's queued occurrences
cannot hold back the other collections' occurrences sharing their batches (not_run.py `record_superseded`).

In-process on the memory store and a ManualClock (tests/support/manual_time.py), against a real local HTTP target:
the wait for the batch's second is ours, so the clock moves in steps while it runs."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime, timedelta

from shared.executor import Executor
from shared.manual_clock import ManualClock
from shared.model import LedgerReason
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.records import HistoryRecord, LedgerEntry
from shared.runtime import Runtime
from shared.store.history import HistoryStore
from tests.executor.peers.servers import Server
from tests.executor.support import http, job_status, make_collection, put_job
from tests.support.manual_time import on_the_clock


class _Counting(HistoryStore):
    """The history store as it is, keeping the ledger entries of each `add_all` call."""

    def __init__(self, inner: HistoryStore) -> None:
        self.__dict__.update(inner.__dict__)
        self.calls: list[list[LedgerEntry]] = []
        self._lock = threading.Lock()

    def add_all(self, notes: list[tuple[HistoryRecord, datetime]], entries: list[LedgerEntry]) -> list[HistoryRecord]:
        with self._lock:
            self.calls.append(list(entries))
        return super().add_all(notes, entries)


def test_the_superseded_occurrences_of_a_batch_are_recorded_together_and_the_others_run(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    make_collection(rt, "P20Premium")
    tomorrow = (rt.clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()
    names = [f"s{n}" for n in range(6)]
    for name in names:
        put_job(rt, name, {"startTime": tomorrow, "action": http(f"{target.url}/{name}")})
    due = rt.clock.now().replace(microsecond=0) + timedelta(seconds=5)  # claims well before the second
    batch = OccurrenceBatch(
        tuple(
            OccurrenceMessage(job.key, due, due, generation=job.generation)
            for job in (job_status(rt, name) for name in names)
        )
    )
    for name in names[1:]:  # redefined after their occurrences were queued
        put_job(rt, name, {"startTime": tomorrow, "action": http(f"{target.url}/{name}/v2")})
    counting = _Counting(rt.store.history)
    executor = Executor(replace(rt.store, history=counting), rt.clock, rt.executor.attempts.actions, rt.settings)
    on_the_clock(clock, lambda: executor.run(batch))
    assert [hit.path for hit in target.hits] == ["/s0"]
    written = [call for call in counting.calls if any(e.reason == LedgerReason.JOB_CHANGED for e in call)]
    assert len(written) == 1
    assert sorted(e.key.job for e in written[0]) == names[1:]
    for item in batch.items[1:]:
        entries, _ = rt.store.history.ledger_page(item.job, None, None, None, 10)
        assert [(e.occurrence, e.reason) for e in entries] == [(due, LedgerReason.JOB_CHANGED)]
