"""A collection's `targetRateLimits` at the executor (shared/executor/limits.py): a herd aimed at one host is paced
to its requests per second across instances, none lost, none doubled, in due order; an occurrence that waited says
so in the ledger (Waiting while it waits longer than 5 s, then `waited`/`waitedFor` on its attempt). A collection
without limits fires as before.

Two instances (runtimes of their own) on the session's Azurite, a real local HTTP target that records when each
request arrived. Scaled down: 5 requests/s, 50 occurrences (10 s, so the later ones are queued again)."""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime, timedelta

from shared.keys import JobKey
from shared.model import JobExecutionStatus, LedgerReason, WaitCause
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.instances import failures, instances
from tests.executor.peers.servers import Hit, Server
from tests.executor.support import JC, RG, SUB, http, job_status, put_job
from tests.support.scheduler_client import call

NEWER = {"api-version": "2026-12-01-preview"}
RATE = 5
HERD = 50
# Slots are exact (1/rate apart), so a request that fires late while the next one is on time shows as one more in
# a strict one-second window. Two instances share this process (one GIL) on a busy 2-core machine and the
# instants are taken at the target after the request was read: up to 0.1 s of wake-up and measuring jitter.
# (Within one process, requests under one rule are also spaced on the wire: executor/wire_turns.py.)
JITTER = 0.1


def limited_collection(rt: Runtime, properties: dict[str, object]) -> None:
    body = {"location": "West US", "properties": {"sku": {"name": "Standard"}, **properties}}
    response = call(rt, "JobCollections_CreateOrUpdate", "PUT", body=body, query=NEWER)
    assert response.status == 201, response.body


def herd(rt: Runtime, url: str, names: list[str]) -> list[JobRecord]:
    """The jobs, each to fire once at a due the test picks after they exist (`due_at`): creating 50 on a busy
    machine takes seconds, which must not eat the lead a due picked before them was given."""
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()
    for name in names:
        put_job(rt, name, {"startTime": tomorrow, "action": http(f"{url}/{name}")})
    return [job_status(rt, name) for name in names]


def due_at(jobs: list[JobRecord], due: datetime) -> list[OccurrenceMessage]:
    return [OccurrenceMessage(job.key, due, due, generation=job.generation) for job in jobs]


def seconds_ahead(seconds: int) -> datetime:
    return datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=seconds)


def most_in_a_second(instants: list[float]) -> int:
    """The most requests in any window of one second (less the target's jitter) starting at a request."""
    ordered = sorted(instants)
    return max(sum(1 for t in ordered[i:] if t - start < 1.0 - JITTER) for i, start in enumerate(ordered))


def wait_for_hits(server: Server, count: int, timeout: float) -> list[Hit]:
    deadline = time.monotonic() + timeout
    while len(server.hits) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # a double would come right after
    return list(server.hits)


def test_a_herd_aimed_at_a_rate_limited_host_is_paced_across_instances_none_lost_none_doubled_in_due_order(
    runtime: Runtime, settings: Settings, target: Server
) -> None:
    limited_collection(runtime, {"targetRateLimits": [{"host": "127.0.0.1", "requestsPerSecond": RATE}]})
    early_jobs = herd(runtime, target.url, [f"a{i:02d}" for i in range(HERD // 2)])
    late_jobs = herd(runtime, target.url, [f"b{i:02d}" for i in range(HERD // 2)])
    waiting_seen: set[LedgerReason | None] = set()
    with instances(settings, 2) as running:
        # Both seconds still ahead when the instances take them: due order holds among attempts that ask for slots
        # at their due; two seconds both long past would ask at once, in whichever order their threads reach the
        # pacer. So the due is picked once the jobs and the instances exist (each takes seconds on a busy machine).
        first_due = seconds_ahead(4)
        early, late = due_at(early_jobs, first_due), due_at(late_jobs, first_due + timedelta(seconds=1))
        # Each second's occurrences split over both instances, as the dispatcher's shards would.
        for items in (early, late):
            running[0].run(OccurrenceBatch(tuple(items[::2])))
            running[1].run(OccurrenceBatch(tuple(items[1::2])))
        deadline = time.monotonic() + 60
        while len(target.hits) < 15 and time.monotonic() < deadline:
            time.sleep(0.1)
        for item in late:  # those queued again for a slot more than 8 s away: Waiting in the ledger meanwhile
            entries, _ = runtime.store.history.ledger_page(item.job, None, None, None, 5)
            waiting_seen.update(e.reason for e in entries if e.status == JobExecutionStatus.WAITING)
        hits = wait_for_hits(target, HERD, 90)
    assert failures(running) == []
    paths = Counter(hit.path for hit in hits)
    assert len(paths) == HERD, "none lost"
    assert max(paths.values()) == 1, "none doubled"
    instants = [hit.at.timestamp() for hit in hits]
    ordered = sorted(instants)
    gaps = [round(b - a, 3) for a, b in zip(ordered, ordered[1:], strict=False)]
    assert most_in_a_second(instants) <= RATE, " ".join(map(str, gaps))
    assert max(instants) - min(instants) >= (HERD - 1) / RATE - 1.0  # paced, not fired at once
    order = [hit.path[1] for hit in sorted(hits, key=lambda h: h.at)]
    assert order == ["a"] * (HERD // 2) + ["b"] * (HERD // 2), "every occurrence of a second before the next's"
    assert waiting_seen == {LedgerReason.WAITING_FOR_RATE_LIMIT}
    last = sorted(hits, key=lambda h: h.at)[-1].path.strip("/")
    entries, _ = runtime.store.history.ledger_page(JobKey(SUB, RG, JC, last), None, None, None, 5)
    assert [(e.status, e.waited_for) for e in entries] == [(JobExecutionStatus.COMPLETED, WaitCause.RATE_LIMIT)]
    assert entries[0].waited is not None and entries[0].waited > timedelta(seconds=5)


def test_a_collection_without_limits_fires_its_herd_at_once(runtime: Runtime, target: Server) -> None:
    limited_collection(runtime, {})
    items = due_at(herd(runtime, target.url, [f"c{i:02d}" for i in range(12)]), seconds_ahead(2))
    runtime.executor.run(OccurrenceBatch(tuple(items)))
    hits = list(target.hits)
    assert len(hits) == 12
    assert max(h.at for h in hits) - min(h.at for h in hits) < timedelta(seconds=3)  # not paced (a busy machine)
    entries, _ = runtime.store.history.ledger_page(items[0].job, None, None, None, 5)
    assert [(e.status, e.waited, e.waited_for) for e in entries] == [(JobExecutionStatus.COMPLETED, None, None)]
