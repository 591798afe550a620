"""For a simulated day, the ledger (newer-version history) holds one entry per nominal occurrence, and only
those: with the real dispatcher, executor and lifecycle on the memory store and one manual clock, a random job
lives through a day with a dispatcher outage (its missed-run policy decides), a Suspended collection and a
Disabled spell; every occurrence of its series that day is named once, run or with the reason it did not run."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.dispatcher import Dispatcher
from shared.jobstate import series_of
from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, LedgerReason
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.memory import MemoryStorage
from shared.timings import Timings
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
DAY = datetime(2026, 3, 2, tzinfo=UTC)
END = DAY + timedelta(days=1)
# One occurrence at a time has nobody to share a storage call with: the executor's gathering windows (real
# seconds, about 0.3 s a batch) would only make the day's 160 batches wait.
NO_GATHERING = Timings(
    batch_gather=timedelta(0),
    job_gather=timedelta(0),
    limits_gather=timedelta(0),
    deferral_gather=timedelta(0),
    record_window=timedelta(0),
)


@st.composite
def days(draw: st.DrawFn) -> dict[str, Any]:
    recurrence = draw(
        st.sampled_from(
            [
                {"frequency": "Minute", "interval": 30},
                {"frequency": "Hour", "interval": 1},
                {"frequency": "Hour", "interval": 2, "schedule": {"minutes": [10, 40]}},
                {"frequency": "Day", "schedule": {"hours": [0, 5, 9, 13, 17, 21], "minutes": [15]}},
                {"frequency": "Minute", "interval": 45, "timeZone": "Europe/London"},
            ]
        )
    )
    policy = draw(st.sampled_from([None, {"type": "Skip"}, {"type": "All", "maxRuns": 2, "window": "PT2H"}]))
    # Three spells, in this order and apart: outage, suspension, disabled (start hour, length in minutes).
    spells = [
        (draw(st.integers(1, 4)), draw(st.integers(70, 240))),
        (draw(st.integers(9, 11)), draw(st.integers(40, 120))),
        (draw(st.integers(15, 18)), draw(st.integers(60, 200))),
    ]
    return {"recurrence": recurrence, "policy": policy, "spells": spells}


def spell(start_hour: int, minutes: int) -> tuple[datetime, datetime]:
    begin = DAY + timedelta(hours=start_hour, minutes=7)
    return begin, begin + timedelta(minutes=minutes)


def empty(rt: Runtime) -> Callable[[], bool]:
    return lambda: rt.store.queue.client.get_queue_properties().approximate_message_count == 0


def collection_state(rt: Runtime, state: str) -> None:
    assert call(rt, "JobCollections_Patch", "PATCH", body={"properties": {"state": state}}).status == 200


def job_state(rt: Runtime, state: str) -> None:
    assert call(rt, "Jobs_Patch", "PATCH", "j", {"properties": {"state": state}}, query=NEWER).status == 200


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(day=days())
def test_ledger_entries_are_the_days_nominal_occurrences(settings: Settings, http_target, day: dict[str, Any]) -> None:
    suffix = uuid.uuid4().hex[:8]  # a deployment of its own per example
    settings = replace(
        settings,
        table_prefix=f"d{suffix}",
        occurrence_queue=f"occ-{suffix}",
        dispatch_queue=f"dsp-{suffix}",
        timings=NO_GATHERING,
    )
    clock = ManualClock(DAY - timedelta(minutes=5))
    storage = MemoryStorage(clock)  # its queues' visibility follows the day's clock too
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    assert (
        call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            "j",
            {
                "properties": {
                    "startTime": DAY.isoformat(),
                    "recurrence": day["recurrence"],
                    "action": {
                        "type": "Http",
                        "request": {"uri": http_target.url, "method": "GET"},
                        "retryPolicy": {"retryType": "None"},
                    },
                    **({"missedRunPolicy": day["policy"]} if day["policy"] else {}),
                }
            },
            query=NEWER,
        ).status
        == 201
    )
    key = JobKey(SUB, RG, JC, "j")
    outage, suspended, disabled = (spell(*s) for s in day["spells"])
    changes = sorted(
        [
            (suspended[0], lambda r: collection_state(r, "Suspended")),
            (suspended[1], lambda r: collection_state(r, "Enabled")),
            (disabled[0], lambda r: job_state(r, "Disabled")),
            (disabled[1], lambda r: job_state(r, "Enabled")),
        ],
        key=lambda change: change[0],
    )
    while True:
        job = rt.store.jobs.get(key)
        assert job is not None
        due = job.next_execution_time
        when = max(due - timedelta(seconds=3), clock.now()) if due is not None else END
        if outage[0] <= when < outage[1]:
            when = outage[1]  # the dispatcher was down: it finds the job behind when it is back
        if changes and changes[0][0] <= min(when, END):
            at, change = changes.pop(0)
            clock.current = at
            change(rt)
            rt = Runtime.create(
                settings, clock, storage=storage
            )  # a fresh executor: no collection state cached from before
            continue
        if due is None or due > END:
            break
        clock.current = when
        Dispatcher(rt.store, clock).dispatch(job, due, clock.now())
        clock.current = max(clock.now(), due)
        drain(rt, 30, until=empty(rt))

    entries, _ = rt.store.history.ledger_page(key, None, None, None, 1000)
    job = rt.store.jobs.get(key)
    assert job is not None
    series = []
    engine = series_of(job).engine
    found = engine.first_at_or_after(DAY)
    while found is not None and found <= END:
        series.append(found)
        found = engine.next_after(found)
    named = sorted(e.occurrence for e in entries if e.occurrence <= END)
    assert named == series  # one entry per nominal occurrence of the day, and no other
    for entry in entries:
        if entry.reason == LedgerReason.COLLECTION_SUSPENDED:
            assert suspended[0] <= entry.occurrence < suspended[1] + timedelta(minutes=1)
        if entry.reason in (LedgerReason.JOB_DISABLED,):
            assert disabled[0] <= entry.occurrence + timedelta(minutes=1) and entry.occurrence < disabled[1]
        if entry.reason in (LedgerReason.SKIPPED_BY_POLICY, LedgerReason.POSTPONED):
            assert outage[0] - timedelta(minutes=1) <= entry.occurrence < outage[1]
