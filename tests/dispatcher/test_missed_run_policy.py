"""Missed-run policies with the dispatcher held back: every-minute jobs, 10 minutes without a tick, then one.

Skip runs none of the 10 missed occurrences, Latest runs 1 (the old rule), All with maxRuns 5 the 5 latest, in
order; the newer api-version's history (the ledger) names every other one with its reason, and 2016-03-01
history keeps its one Postponed note. After a 3-hour stop every job is still Enabled and fires on time.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from shared.dispatcher import Dispatcher
from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, JobState
from shared.occurrence import OccurrenceBatch
from shared.runtime import Runtime
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection


@pytest.fixture
def storage() -> None:
    """Azurite, not the folder's memory store: an All policy's catch-up sends its occurrences in one batch, and the
    executor fires a batch's past-due attempts side by side, so their order at the target is a race (a gap of the
    executor, not of the policy: the ledger's order is the policy's). Azurite's round trips have kept that race
    won in due order; the memory store is fast enough to lose it under load."""
    return None


NEWER = {"api-version": PREVIEW_API_VERSION}
POLICIES: dict[str, dict[str, Any] | None] = {
    "skip": {"type": "Skip"},
    "latest": None,
    "all": {"type": "All", "maxRuns": 5, "window": "PT1H"},
}


def put_jobs(rt: Runtime, url: str, start: datetime) -> None:
    for name, policy in POLICIES.items():
        properties: dict[str, Any] = {
            "startTime": start.isoformat(),
            "recurrence": {"frequency": "Minute", "interval": 1},
            "action": {"type": "Http", "request": {"uri": url, "method": "POST"}, "retryPolicy": {"retryType": "None"}},
            **({"missedRunPolicy": policy} if policy else {}),
        }
        response = call(rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": properties}, query=NEWER)
        assert response.status == 201, response.body


def ledger(rt: Runtime, name: str) -> list[dict[str, Any]]:
    response = call(rt, "Jobs_ListJobHistory", "GET", name, query=NEWER)
    assert response.status == 200, response.body
    return [entry["properties"] for entry in response.body["value"]]


def fired(hits: list[Any], name: str) -> list[str]:
    return [
        h.headers["x-ms-scheduler-expected-execution-time"] for h in hits if h.headers["x-ms-scheduler-jobid"] == name
    ]


def minute(start: datetime, n: int) -> str:
    return (start + timedelta(minutes=n)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_ten_missed_minutes_under_each_policy(settings, clock: ManualClock, http_target, storage) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    start = clock.now().replace(second=0) + timedelta(minutes=3)  # beyond the API's own dispatch
    put_jobs(rt, http_target.url, start)
    clock.current = start + timedelta(minutes=9, seconds=30)  # 10 occurrences missed: start .. start + 9 min
    report = Dispatcher(rt.store, clock).tick()
    assert report.stale == 0 and report.failed == 0
    drain(rt, 30, until=lambda: len(http_target.requests) >= 6)

    assert fired(http_target.requests, "skip") == []
    assert fired(http_target.requests, "latest") == [minute(start, 9)]
    assert fired(http_target.requests, "all") == [minute(start, n) for n in range(5, 10)]  # the 5 latest, in order

    expected_reasons = {"skip": ["SkippedByPolicy"] * 10, "latest": ["Postponed"] * 9, "all": ["SkippedByPolicy"] * 5}
    for name, reasons in expected_reasons.items():
        entries = ledger(rt, name)
        missed = [e for e in entries if e["occurrenceTime"] <= minute(start, 9)]
        assert sorted(e["occurrenceTime"] for e in missed) == [minute(start, n) for n in range(10)]  # all named
        let_go = [e for e in missed if e.get("reason")]
        assert [e["reason"] for e in let_go] == reasons
        assert all(e["status"] == ("Postponed" if name == "latest" else "Skipped") for e in let_go)
        ran = [e for e in missed if not e.get("reason")]
        assert all(e["status"] == "Completed" and e["attempts"] == 1 for e in ran)
        assert len(ran) == {"skip": 0, "latest": 1, "all": 5}[name]
        assert len({e["executionTag"] for e in entries}) == len(entries)  # one identity per occurrence
        old = call(rt, "Jobs_ListJobHistory", "GET", name).body["value"]  # 2016-03-01: attempts and one note
        assert [h["properties"]["status"] for h in old if h["properties"]["status"] == "Postponed"] == ["Postponed"]
        assert all(
            set(h["properties"])
            <= {
                "startTime",
                "endTime",
                "expectedExecutionTime",
                "actionName",
                "status",
                "message",
                "retryCount",
                "repeatCount",
            }
            for h in old
        )


@pytest.mark.parametrize("name", list(POLICIES))
def test_after_a_three_hour_stop_the_job_is_enabled_and_fires_on_time(
    settings, clock: ManualClock, http_target, storage, name: str
) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    start = clock.now().replace(second=0) + timedelta(minutes=3)
    put_jobs(rt, http_target.url, start)
    clock.current = start + timedelta(hours=3, seconds=-3)  # 3 hours of minutes missed, 3 s before the next
    Dispatcher(rt.store, clock).tick()
    job = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
    assert job is not None and job.state == JobState.ENABLED
    on_time = start + timedelta(hours=3)
    assert job.next_execution_time == on_time + timedelta(minutes=1)  # the next one is queued already:
    items = [
        (item.occurrence, item.due)
        for m in rt.store.queue.client.peek_messages(max_messages=32)
        for item in OccurrenceBatch.from_json(m.content).items
        if item.job.job == name
    ]
    assert (on_time, on_time) in items  # ... for its own second
    let_go, _ = rt.store.history.ledger_page(job.key, None, None, None, 1000)
    queued = {occurrence for occurrence, _ in items if occurrence < on_time}
    assert len(queued) == {"skip": 0, "latest": 1, "all": 5}[name]
    missed = {start + timedelta(minutes=n) for n in range(180)}
    assert {e.occurrence for e in let_go} | queued == missed  # every missed minute is named or runs
    assert len(let_go) + len(queued) == 180
