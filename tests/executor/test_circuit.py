"""A destination's circuit (issue 40, jobstate/circuit.py through executor/destinations.py): a target that is down
(500 to everything) for DOWN seconds, then up. A herd of jobs whose attempts fail opens the circuit at once; while
it is open the target sees at most one probe per `circuit_probe_every`; when a probe succeeds every occurrence runs,
each accepted once; the retries the jobs spent are their first failures and the probes', not one per retry
interval. The ledger says Deferred, naming the destination, while they wait. One instance on the session's Azurite.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from shared.keys import JobKey
from shared.model import JobExecutionStatus, LedgerReason
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.instances import failures, instances
from tests.executor.peers.servers import Hit, serve
from tests.executor.support import JC, RG, SUB, fixed, http, job_status, put_job
from tests.executor.test_rate_limit import limited_collection

JOBS = 8
DOWN = 9.0  # seconds the target answers 500 after the herd's second
PROBE_EVERY = timedelta(seconds=2)
RETRY = fixed(1, 20)


class Flaky:
    def __init__(self) -> None:
        self.up_at = float("inf")
        self.answers: list[tuple[float, str, int]] = []
        self.lock = threading.Lock()
        self.server = serve(self.answer)

    def answer(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        now = time.time()
        status = 200 if now >= self.up_at else 500
        with self.lock:
            self.answers.append((now, hit.path, status))
        return status, {}, b"ok" if status == 200 else b"down"


def test_a_target_down_then_up_opens_the_circuit_probes_it_sparingly_and_runs_every_occurrence_once_after(
    settings: Settings,
) -> None:
    timings = replace(settings.timings, circuit_probe_every=PROBE_EVERY, circuit_answer_wait=timedelta(seconds=0.5))
    settings = replace(settings, timings=timings)
    target = Flaky()
    rt = Runtime.create(settings)
    try:
        limited_collection(rt, {})
        due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
        target.up_at = due.timestamp() + DOWN
        items = []
        tomorrow = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()
        for i in range(JOBS):
            name = f"c{i}"
            put_job(rt, name, {"startTime": tomorrow, "action": http(f"{target.server.url}/{name}")}, RETRY)
            job = job_status(rt, name)
            items.append(OccurrenceMessage(job.key, due, due, generation=job.generation))
        deferred: set[str] = set()
        with instances(settings, 1) as running:
            running[0].run(OccurrenceBatch(tuple(items)))
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                if len({p for _, p, s in target.answers if s == 200}) == JOBS:
                    break
                for item in items[:3]:
                    entries, _ = rt.store.history.ledger_page(item.job, None, None, None, 5)
                    deferred.update(e.message for e in entries if e.reason == LedgerReason.DEFERRED)
                time.sleep(0.2)
            time.sleep(2.0)  # a double would come right after
        assert failures(running) == []
    finally:
        target.server.close()
        rt.close()
    answers = sorted(target.answers)
    succeeded = Counter(path for _, path, status in answers if status == 200)
    assert len(succeeded) == JOBS and max(succeeded.values()) == 1, answers
    failed = [t for t, _, status in answers if status == 500]
    opened = sorted(failed)[4]  # the fifth failure in a row opens it
    assert opened - due.timestamp() < 10, "opens within 10 s"
    while_open = [t for t in failed if t > opened + 0.5]
    # At most one probe per PROBE_EVERY (a little jitter: a probe's instant is when its process asked).
    gaps = [b - a for a, b in zip(while_open, while_open[1:], strict=False)]
    assert all(gap >= PROBE_EVERY.total_seconds() * 0.8 for gap in gaps), gaps
    assert len(while_open) <= DOWN / PROBE_EVERY.total_seconds() + 1, while_open
    first_success = min(t for t, _, status in answers if status == 200)
    assert first_success - target.up_at < PROBE_EVERY.total_seconds() + 1.5, "a probe finds it up"
    assert any("is open" in message and "127.0.0.1:" in message for message in deferred), deferred
    spent = 0
    for i in range(JOBS):
        history, _ = rt.store.history.page(JobKey(SUB, RG, JC, f"c{i}"), None, 50)
        assert history[0].status == JobExecutionStatus.COMPLETED
        spent += max(h.retry_count for h in history)
    # Without the circuit each job would spend a retry a second while the target is down (about 8 x 9).
    assert spent <= JOBS + len(while_open) + 2, spent
