"""POST .../jobs/{job}/backfill (newer api-version): a past interval's occurrences run again, in order, each with
an identity of its own, under the job's policies, visible in history and in the ledger."""

from __future__ import annotations

from datetime import datetime, timedelta

from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION
from shared.occurrence import Trigger, execution_id
from shared.runtime import Runtime
from tests.executor.peers.servers import Hit
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}


def z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_backfill_runs_each_occurrence_of_the_interval_once_in_order(
    settings, clock: ManualClock, http_target
) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    start = clock.now().replace(second=0) - timedelta(hours=2)
    assert (
        call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            "quarterly",
            {
                "properties": {
                    "startTime": start.isoformat(),
                    "recurrence": {"frequency": "Minute", "interval": 15},
                    "action": {"type": "Http", "request": {"uri": http_target.url, "method": "POST"}},
                }
            },
            query=NEWER,
        ).status
        == 201
    )
    answer = call(
        rt, "Jobs_Backfill", "POST", "quarterly", {"from": z(start), "to": z(start + timedelta(hours=1))}, query=NEWER
    )
    assert answer.status == 200, answer.body
    wanted = [start + timedelta(minutes=15 * n) for n in range(4)]
    assert [o["occurrenceTime"] for o in answer.body["value"]] == [z(o) for o in wanted]
    key = JobKey(SUB, RG, JC, "quarterly")
    assert [o["executionTag"] for o in answer.body["value"]] == [execution_id(key, o, Trigger.BACKFILL) for o in wanted]
    end = z(start + timedelta(hours=1))

    def backfilled() -> list[Hit]:
        return [h for h in http_target.requests if h.headers["x-ms-scheduler-expected-execution-time"] < end]

    drain(rt, 30, until=lambda: len(backfilled()) >= 4)
    assert [h.headers["x-ms-scheduler-expected-execution-time"] for h in backfilled()] == [z(o) for o in wanted]
    tags = [h.headers["idempotency-key"] for h in backfilled()]
    assert len(set(tags)) == 4 and all(
        t != execution_id(key, o, Trigger.SCHEDULE) for t, o in zip(tags, wanted, strict=True)
    )
    ledger = [e["properties"] for e in call(rt, "Jobs_ListJobHistory", "GET", "quarterly", query=NEWER).body["value"]]
    assert sorted(e["occurrenceTime"] for e in ledger if e["trigger"] == "Backfill") == [z(o) for o in wanted]
    assert all(e["status"] == "Completed" for e in ledger if e["trigger"] == "Backfill")
    old = call(rt, "Jobs_ListJobHistory", "GET", "quarterly").body["value"]  # 2016-03-01: the attempts
    assert len([h for h in old if h["properties"]["status"] == "Completed"]) >= 4


def test_backfill_is_refused_clearly(settings, clock: ManualClock) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    now = clock.now()
    assert (
        call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            "minutely",
            {
                "properties": {
                    "startTime": (now - timedelta(days=2)).isoformat(),
                    "recurrence": {"frequency": "Minute"},
                    "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
                }
            },
        ).status
        == 201
    )
    day_ago = now - timedelta(days=1)
    cases = [
        ({"api-version": "2016-03-01"}, {"from": z(day_ago), "to": z(day_ago + timedelta(minutes=5))}, 400),
        (NEWER, {"from": z(day_ago), "to": z(now + timedelta(minutes=5))}, 400),  # not past
        (NEWER, {"from": z(day_ago), "to": z(day_ago)}, 400),
        (NEWER, {"from": z(day_ago)}, 400),
        (NEWER, {"from": "yesterday", "to": z(day_ago)}, 400),
        (NEWER, {"from": z(day_ago), "to": z(day_ago + timedelta(hours=17))}, 400),  # over 1,000 occurrences
    ]
    queued = rt.store.queue.client.get_queue_properties().approximate_message_count
    for query, body, status in cases:
        answer = call(rt, "Jobs_Backfill", "POST", "minutely", body, query=query)
        assert answer.status == status and set(answer.body) == {"error"}, (body, answer.body)
    assert rt.store.queue.client.get_queue_properties().approximate_message_count == queued  # nothing queued
    assert call(rt, "Jobs_Backfill", "POST", "missing", {"from": z(day_ago), "to": z(now)}, query=NEWER).status == 404
