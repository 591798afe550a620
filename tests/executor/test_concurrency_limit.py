"""A collection's `maxConcurrentExecutions` at the executor (shared/executor/limits.py): three instances serving one
collection never have more than the limit in flight at the target; the occurrences beyond it wait in line (in
their coroutines, a slot freed in any instance taken within moments) and all run, once each, their attempts saying
they waited for Concurrency.

Three instances (runtimes of their own) on the session's Azurite; a real local HTTP target that answers after
0.6 s and counts the requests it holds at once. Scaled down: limit 3, 15 occurrences due the same second."""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

from shared.keys import JobKey
from shared.model import JobExecutionStatus, WaitCause
from shared.occurrence import OccurrenceBatch
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.instances import failures, instances
from tests.executor.peers.servers import Hit, serve
from tests.executor.support import JC, RG, SUB
from tests.executor.test_rate_limit import herd, limited_collection, wait_for_hits

LIMIT = 3
HERD = 15


class Counting:
    """What the target holds at once, at most."""

    def __init__(self, hold: float) -> None:
        self.hold = hold
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0

    def __call__(self, _: Hit) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.hold)
        with self.lock:
            self.now -= 1
        return 200, {"Content-Type": "text/plain"}, b"done"


def test_a_collection_limited_to_k_executions_never_has_more_than_k_in_flight_across_three_instances(
    runtime: Runtime, settings: Settings
) -> None:
    counting = Counting(0.6)
    target = serve(counting)
    try:
        limited_collection(runtime, {"maxConcurrentExecutions": LIMIT})
        due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=4)
        items = herd(runtime, target.url, [f"j{i:02d}" for i in range(HERD)], due)
        with instances(settings, 3) as running:
            for n, instance in enumerate(running):
                instance.run(OccurrenceBatch(tuple(items[n::3])))
            hits = wait_for_hits(target, HERD, 120)
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
        entries, _ = runtime.store.history.ledger_page(JobKey(SUB, RG, JC, path.strip("/")), None, None, None, 5)
        assert [e.status for e in entries] == [JobExecutionStatus.COMPLETED]
        waited.append(entries[0].waited_for)
    assert waited.count(WaitCause.CONCURRENCY) >= HERD - LIMIT  # every one beyond the first k waited in line
    gate = runtime.store.gates
    assert gate is not None
    assert gate.state(items[0].job.collection_key).held(datetime.now(UTC)) == ()  # every slot given back
