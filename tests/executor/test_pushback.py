"""A destination that pushes back (issue 40, executor/destinations.py): a herd against a target that takes RATE
requests a second and answers 429 with Retry-After above that. Every occurrence reaches the target accepted once,
none is failed or retried (a deferral uses no retry), the requests after the first second of throttling stay within
the target's budget, the ledger says Deferred with the destination while they wait and `waitedFor: Destination` on
their attempts. Two instances (runtimes of their own) on the session's Azurite, a real local target.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

from shared.keys import JobKey
from shared.model import JobExecutionStatus, LedgerReason, WaitCause
from shared.occurrence import OccurrenceBatch
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.instances import failures, instances
from tests.executor.peers.servers import Hit, Server, serve
from tests.executor.support import JC, RG, SUB
from tests.executor.test_rate_limit import due_at, herd, limited_collection, most_in_a_second, seconds_ahead

RATE = 8  # the target takes this many requests in any second
HERD = 40
RETRY_AFTER = 2


class Budgeted:
    """A target that takes RATE requests in any sliding second and answers 429 with Retry-After to the others."""

    def __init__(self) -> None:
        self.taken: list[float] = []
        self.refused: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        self.server: Server = serve(self.answer)

    def answer(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        now = time.time()
        with self.lock:
            recent = [t for t in self.taken if now - t < 1.0]
            if len(recent) >= RATE:
                self.refused.append((now, hit.path))
                return 429, {"Retry-After": str(RETRY_AFTER)}, b"slow down"
            self.taken.append(now)
            return 200, {}, b"ok"


def test_a_herd_against_a_target_that_answers_429_is_deferred_within_its_budget_none_lost_none_retried(
    runtime: Runtime, settings: Settings
) -> None:
    target = Budgeted()
    try:
        limited_collection(runtime, {})
        jobs = herd(runtime, target.server.url, [f"p{i:02d}" for i in range(HERD)])
        deferred_seen: list[str] = []
        with instances(settings, 2) as running:
            items = due_at(jobs, seconds_ahead(3))  # ahead of the instances' start, however long it took
            running[0].run(OccurrenceBatch(tuple(items[::2])))
            running[1].run(OccurrenceBatch(tuple(items[1::2])))
            deadline = time.monotonic() + 120
            while len(target.taken) < HERD and time.monotonic() < deadline:
                for item in items[:: HERD // 8]:
                    entries, _ = runtime.store.history.ledger_page(item.job, None, None, None, 5)
                    deferred_seen += [e.message for e in entries if e.reason == LedgerReason.DEFERRED]
                time.sleep(0.2)
            time.sleep(2.0)  # a double would come right after
        assert failures(running) == []
    finally:
        target.server.close()
    taken_paths = Counter(path for path in _taken_paths(target))
    assert len(taken_paths) == HERD, "none lost"
    assert max(taken_paths.values()) == 1, "none accepted twice"
    assert target.refused, "the herd met the target's limit"
    throttled_from = min(t for t, _ in target.refused)
    later = [hit.at.timestamp() for hit in target.server.hits if hit.at.timestamp() >= throttled_from + 1.0]
    timeline = " ".join(f"{h.at.timestamp() - throttled_from:.2f}" for h in target.server.hits)
    assert later and most_in_a_second(later) <= RATE, timeline
    # The budget is what the target takes, not a trickle: at least 40 % of it (each of two instances learns its
    # own share), after the Retry-After.
    assert max(later) - throttled_from <= RETRY_AFTER + HERD / (0.4 * RATE), timeline
    assert any(f"127.0.0.1:{target.server.url.rsplit(':', 1)[1]}" in m for m in deferred_seen), deferred_seen
    refused_paths = {path for _, path in target.refused}
    for path in sorted(refused_paths)[:5]:
        key = JobKey(SUB, RG, JC, path.strip("/"))
        history, _ = runtime.store.history.page(key, None, 10)
        assert [(h.status, h.retry_count) for h in history] == [(JobExecutionStatus.COMPLETED, 0)], "no retry used"
        entries, _ = runtime.store.history.ledger_page(key, None, None, None, 5)
        assert [(e.status, e.waited_for) for e in entries] == [(JobExecutionStatus.COMPLETED, WaitCause.DESTINATION)]


def _taken_paths(target: Budgeted) -> list[str]:
    refused = Counter(path for _, path in target.refused)
    paths = Counter(hit.path for hit in target.server.hits)
    return [path for path, count in paths.items() for _ in range(count - refused.get(path, 0))]
