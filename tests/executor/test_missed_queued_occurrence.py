"""An occurrence queued before an outage, through the real dispatcher, queue, executor, recorder and store (Azurite)
and a real local HTTP target, on a hand-moved clock: every-minute jobs under Skip, Latest (a 2016-03-01 job, no
policy) and All. The dispatcher queues T (a minute ahead) and moves on; the service stops; 3 min 23 s after T it
is back: the executor receives T first, then a tick catches up from T + 1 min. Skip runs none of T .. T + 3 min,
Latest only T + 3 min, All all four in order, and the ledger names every one with the policy. On time (up to
MISSED_AFTER late, exactly) the same occurrence runs under Skip as before; a one-shot let go completes its job.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from shared.dispatcher import Dispatcher
from shared.jobstate import MISSED_AFTER
from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, JobState
from shared.runtime import Runtime
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
POLICIES: dict[str, dict[str, Any] | None] = {"skip": {"type": "Skip"}, "latest": None, "all": {"type": "All"}}
OUTAGE = timedelta(minutes=3, seconds=23)  # from T to the service's return
PATIENCE = 60.0  # seconds of real time for the executor and the recorder on a busy machine


def stamp(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def put_job(
    rt: Runtime, name: str, url: str, start: datetime, policy: dict[str, Any] | None, once: bool = False
) -> None:
    properties: dict[str, Any] = {
        "startTime": start.isoformat(),
        **({} if once else {"recurrence": {"frequency": "Minute", "interval": 1}}),
        "action": {"type": "Http", "request": {"uri": url, "method": "POST"}, "retryPolicy": {"retryType": "None"}},
        **({"missedRunPolicy": policy} if policy else {}),
    }
    query = NEWER if policy else None  # the job without a policy is a 2016-03-01 job: the old rule, Latest
    response = call(rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": properties}, query=query)
    assert response.status == 201, response.body


def queue_before_outage(rt: Runtime, clock: ManualClock, names: list[str], at: datetime) -> None:
    """What the dispatcher did before the service stopped: queue `at` (its message visible at once) and move on."""
    clock.current = at - timedelta(seconds=3)
    for name in names:
        job = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
        assert job is not None and job.next_execution_time == at
        assert Dispatcher(rt.store, clock).dispatch(job, at, clock.now()) is not None


def ledger(rt: Runtime, name: str) -> dict[str, dict[str, Any]]:
    """The job's ledger (the newer version's history) by occurrenceTime."""
    response = call(rt, "Jobs_ListJobHistory", "GET", name, query=NEWER)
    assert response.status == 200, response.body
    return {entry["properties"]["occurrenceTime"]: entry["properties"] for entry in response.body["value"]}


def settled(rt: Runtime, name: str, *occurrences: datetime) -> bool:
    entries = ledger(rt, name)
    return all(entries.get(stamp(o), {}).get("status") not in (None, "Running", "Waiting") for o in occurrences)


def fired(http_target: Any, name: str) -> list[str]:
    return [
        hit.headers["x-ms-scheduler-expected-execution-time"]
        for hit in list(http_target.requests)
        if hit.headers["x-ms-scheduler-jobid"] == name
    ]


def test_an_occurrence_queued_before_an_outage_follows_each_policy(settings, clock: ManualClock, http_target) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    t = clock.now().replace(second=0) + timedelta(minutes=3)  # beyond the API's own dispatch
    for name, policy in POLICIES.items():
        put_job(rt, name, http_target.url, t, policy)
    queue_before_outage(rt, clock, list(POLICIES), t)
    minutes = [t + timedelta(minutes=n) for n in range(4)]  # T .. T + 3 min: due while the service was down

    clock.current = t + OUTAGE  # back: the queued T reaches the executor 3 min 23 s after its second
    drain(rt, PATIENCE, until=lambda: all(settled(rt, name, t) for name in POLICIES))
    assert fired(http_target, "skip") == [] and fired(http_target, "latest") == []
    assert fired(http_target, "all") == [stamp(t)]
    skip, latest, every = (ledger(rt, name)[stamp(t)] for name in POLICIES)
    assert (skip["status"], skip["reason"]) == ("Skipped", "SkippedByPolicy")
    assert "missed-run policy Skip" in skip["message"]
    assert (latest["status"], latest["reason"]) == ("Postponed", "Postponed")
    assert f"the Latest missed-run policy ran the latest missed occurrence, {stamp(minutes[3])}" in latest["message"]
    assert every["status"] == "Completed" and "reason" not in every

    Dispatcher(rt.store, clock).tick()  # its catch-up, from T + 1 min
    drain(
        rt,
        PATIENCE,
        until=lambda: len(fired(http_target, "all")) >= 4 and all(settled(rt, name, *minutes) for name in POLICIES),
    )
    assert fired(http_target, "skip") == []
    assert fired(http_target, "latest") == [stamp(minutes[3])]
    assert fired(http_target, "all") == [stamp(m) for m in minutes]  # all four, in order
    expected = {
        "skip": ["SkippedByPolicy"] * 4,
        "latest": ["Postponed", "Postponed", "Postponed", None],
        "all": [None] * 4,
    }
    for name, reasons in expected.items():
        entries = ledger(rt, name)
        assert [entries[stamp(m)].get("reason") for m in minutes] == reasons  # every occurrence named, once
        assert all(entries[stamp(m)]["status"] == "Completed" for m, r in zip(minutes, reasons, strict=True) if not r)
        job = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
        assert job is not None and job.state == JobState.ENABLED


@pytest.mark.parametrize("late", [timedelta(0), MISSED_AFTER], ids=["at its second", "exactly MISSED_AFTER late"])
def test_on_time_the_queued_occurrence_runs_whatever_the_policy(
    settings, clock: ManualClock, http_target, late: timedelta
) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    t = clock.now().replace(second=0) + timedelta(minutes=3)
    put_job(rt, "skip", http_target.url, t, POLICIES["skip"])
    queue_before_outage(rt, clock, ["skip"], t)
    clock.current = t + late
    drain(rt, PATIENCE, until=lambda: settled(rt, "skip", t))
    assert fired(http_target, "skip") == [stamp(t)]
    entry = ledger(rt, "skip")[stamp(t)]
    assert entry["status"] == "Completed" and "reason" not in entry and entry["attempts"] == 1


def test_a_one_shot_let_go_by_skip_completes_its_job(settings, clock: ManualClock, http_target) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    t = clock.now().replace(second=0) + timedelta(minutes=3)
    put_job(rt, "once", http_target.url, t, POLICIES["skip"], once=True)
    queue_before_outage(rt, clock, ["once"], t)
    job = rt.store.jobs.get(JobKey(SUB, RG, JC, "once"))
    assert job is not None and job.state == JobState.ENABLED and job.next_execution_time is None
    clock.current = t + OUTAGE
    drain(rt, PATIENCE, until=lambda: settled(rt, "once", t))
    assert fired(http_target, "once") == []
    assert ledger(rt, "once")[stamp(t)]["reason"] == "SkippedByPolicy"
    job = rt.store.jobs.get(JobKey(SUB, RG, JC, "once"))
    assert job is not None and job.state == JobState.COMPLETED
