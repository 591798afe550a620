"""A collection's autoSpread at dispatch (shared/spread_plans.py over jobstate/auto_spread.py): a tick queues the
jobs of a second over their host's targetRateLimits at the following seconds, the budget's worth each, with their
identity unchanged; a job of another host keeps its second; and another process, planning after the dispatch
changed the rows, makes the same plan."""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import timedelta

from shared.dispatcher import Dispatcher
from shared.runtime import Runtime
from shared.spread_plans import SpreadPlans
from tests.dispatcher.test_batch_span import _SentQueue
from tests.support.scheduler_client import JC, call

NEW = {"api-version": "2026-12-01-preview"}
RULED = "http://127.0.0.1:9/"
OTHER = "http://localhost:9/"


def test_a_tick_spreads_a_crowded_second_at_the_rules_rate_and_leaves_the_rest(settings, clock, storage) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    properties = {
        "sku": {"name": "Standard"},
        "targetRateLimits": [{"host": "127.0.0.1", "requestsPerSecond": 5}],
        "autoSpread": {"tolerance": "PT10S"},
    }
    made = call(
        rt,
        "JobCollections_CreateOrUpdate",
        "PUT",
        collection=JC,
        body={"location": "westus", "properties": properties},
        query=NEW,
    )
    assert made.status == 201, made.body
    first = clock.now().replace(second=0, microsecond=0) + timedelta(minutes=2, seconds=10)
    for name, uri in [*((f"ruled{n}", RULED) for n in range(20)), *((f"other{n}", OTHER) for n in range(5))]:
        body = {
            "properties": {
                "startTime": first.isoformat(),
                "action": {"type": "Http", "request": {"uri": uri, "method": "GET"}},
            }
        }
        assert call(rt, "Jobs_CreateOrUpdate", "PUT", name, body).status == 201
    queue = _SentQueue(rt.store.queue)
    clock.advance(timedelta(minutes=1))
    assert Dispatcher(dataclasses.replace(rt.store, queue=queue), clock).tick().enqueued == 25
    queued = {m.job.job: m for batch in queue.sent for m in batch.items}
    ruled = Counter(int((queued[f"ruled{n}"].due - first).total_seconds()) for n in range(20))
    assert ruled == {0: 5, 1: 5, 2: 5, 3: 5}
    assert all(queued[f"other{n}"].due == first for n in range(5))
    assert {m.occurrence for m in queued.values()} == {first}  # the identity stays the nominal second
    # Another process plans after the dispatch advanced every job past its occurrence: the same seconds.
    again = SpreadPlans(rt.store)
    jobs = {name: rt.store.jobs.get(m.job) for name, m in queued.items()}
    assert all(
        first + again.offset(job, first, first) == queued[name].due for name, job in jobs.items() if job is not None
    )
    assert sum(job is not None for job in jobs.values()) == 25
