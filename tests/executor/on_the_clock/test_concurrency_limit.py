"""A collection's `maxConcurrentExecutions` at the executor (shared/executor/limits.py): three instances serving one
collection never have more than the limit in flight at the target; the occurrences beyond it wait in line (in
their coroutines, a slot freed in any instance taken within moments) and all run, once each, their attempts saying
they waited for Concurrency.

Three instances (runtimes of their own) on one memory storage and one ManualClock (tests/support/manual_time.py):
the line's waits, peeks and leases are ours, so the clock moves in steps while the instances run. A real local HTTP
target answers 0.6 s of the clock after a request came (its thread sleeps on the clock) and counts the requests it
holds at once. Scaled down: limit 3, 15 occurrences due the same second."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import timedelta

import pytest

from shared.keys import JobKey
from shared.manual_clock import ManualClock
from shared.model import JobExecutionStatus, WaitCause
from shared.occurrence import OccurrenceBatch
from shared.runtime import Runtime
from shared.store.memory import MemoryStorage
from tests.executor.instances import Instance, failures, running
from tests.executor.peers.servers import Hit, serve
from tests.executor.support import JC, RG, SUB
from tests.executor.test_rate_limit import due_at, herd, limited_collection
from tests.support.manual_time import runtime_in_memory, step_until, until

LIMIT = 3
HERD = 15
STEP = 0.1  # clock seconds per step
STEPS = 2000  # at most, per wait


class Counting:
    """What the target holds at once, at most; each request held `hold` seconds of `clock`."""

    def __init__(self, clock: ManualClock, hold: float) -> None:
        self.clock = clock
        self.hold = hold
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0

    def __call__(self, _: Hit) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        self.clock.sleep(self.hold)
        with self.lock:
            self.now -= 1
        return 200, {"Content-Type": "text/plain"}, b"done"


@pytest.fixture
def rt(clock: ManualClock, shared_storage: MemoryStorage) -> Iterator[Runtime]:
    with runtime_in_memory(clock, shared_storage) as runtime:
        yield runtime


@contextmanager
def instances_in_memory(clock: ManualClock, storage: MemoryStorage, count: int) -> Iterator[list[Instance]]:
    """`count` instances polling the occurrence queue (tests/executor/instances.py) on `storage`; stopped at the
    end, their work awaited while the clock moves."""

    def ended(started: list[Instance]) -> None:
        step_until(clock, lambda: not any(t.is_alive() for i in started for t in i.threads), STEP, STEPS)

    with ExitStack() as runtimes:
        deployments = [runtimes.enter_context(runtime_in_memory(clock, storage)) for _ in range(count)]
        with running(deployments, ended) as started:
            yield started


def test_a_collection_limited_to_k_executions_never_has_more_than_k_in_flight_across_three_instances(
    rt: Runtime, clock: ManualClock, shared_storage: MemoryStorage
) -> None:
    counting = Counting(clock, 0.6)
    target = serve(counting)
    try:
        limited_collection(rt, {"maxConcurrentExecutions": LIMIT})
        due = clock.now().replace(microsecond=0) + timedelta(seconds=4)
        items = due_at(herd(rt, target.url, [f"j{i:02d}" for i in range(HERD)]), due)
        with instances_in_memory(clock, shared_storage, 3) as running:
            for n, instance in enumerate(running):
                instance.run(OccurrenceBatch(tuple(items[n::3])))
            step_until(clock, lambda: len(target.hits) >= HERD, STEP, STEPS)
            # A double would come by the line's longest back-off (15 s of the clock), in steps of half a second:
            # every request has come, what is left is recording.
            later = clock.now() + timedelta(seconds=16)
            step_until(clock, lambda: clock.now() >= later, 0.5, STEPS)
            assert until(lambda: counting.now == 0)
            hits = list(target.hits)
        assert failures(running) == []
    finally:
        target.close()
    paths = Counter(hit.path for hit in hits)
    assert len(paths) == HERD, "none lost"
    assert max(paths.values()) == 1, "none doubled"
    assert counting.most <= LIMIT
    assert counting.most == LIMIT  # the limit is used, not just respected
    waited = []
    for path in paths:
        entries, _ = rt.store.history.ledger_page(JobKey(SUB, RG, JC, path.strip("/")), None, None, None, 5)
        assert [e.status for e in entries] == [JobExecutionStatus.COMPLETED]
        waited.append(entries[0].waited_for)
    assert waited.count(WaitCause.CONCURRENCY) >= HERD - LIMIT  # every one beyond the first k waited in line
    gate = rt.store.gates
    assert gate is not None
    assert gate.state(items[0].job.collection_key).held(clock.now()) == ()  # every slot given back
