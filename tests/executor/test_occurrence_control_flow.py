"""Occurrence control end to end: written through the API (newer api-version), dispatched by the real dispatcher,
carried by the real occurrence queue (Azurite), run by the executor against a real local HTTP target, recorded in
the ledger, on a hand-moved clock (the queue's visibility counts real seconds, a few per occurrence).

An every-minute job from T with three exceptions: T + 1 min skipped (it does not fire; T + 2 min's place is kept),
T + 2 min moved to T + 2 min 20 s (fires there, once), an extra run at T + 3 min 40 s (fires once); every other
occurrence fires at its second. A second every-minute job paused until T + 3 min 30 s with a note: at that instant
its resume runs the latest held occurrence (T + 3 min, the Latest policy) and nothing before; the ledger names each
held one, reason Paused, with the note; T + 4 min fires on time.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial
from typing import Any

from shared.dispatcher import Dispatcher
from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
PATIENCE = 60.0  # seconds of real time for the executor and the recorder on a busy machine
MIN = timedelta(minutes=1)


def stamp(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def put_job(rt: Runtime, name: str, url: str, start: datetime, collection: str = JC, **control: Any) -> None:
    properties = {
        "startTime": stamp(start),
        "recurrence": {"frequency": "Minute", "interval": 1},
        "action": {"type": "Http", "request": {"uri": url, "method": "POST"}, "retryPolicy": {"retryType": "None"}},
        **control,
    }
    answer = call(
        rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": properties}, query=NEWER, collection=collection
    )
    assert answer.status == 201, answer.body


def ledger(rt: Runtime, name: str, collection: str = JC) -> dict[str, dict[str, Any]]:
    response = call(rt, "Jobs_ListJobHistory", "GET", name, query=NEWER, collection=collection)
    assert response.status == 200, response.body
    return {entry["properties"]["occurrenceTime"]: entry["properties"] for entry in response.body["value"]}


def fired(http_target: Any, name: str) -> list[str]:
    return [
        hit.headers["x-ms-scheduler-expected-execution-time"]
        for hit in list(http_target.requests)
        if hit.headers["x-ms-scheduler-jobid"] == name
    ]


def ran(rt: Runtime, name: str, occurrence: str, collection: str = JC) -> bool:
    return ledger(rt, name, collection).get(occurrence, {}).get("status") in ("Completed", "Failed", "Skipped")


def step(rt: Runtime, clock: ManualClock, names: list[str], until: datetime, collection: str = JC) -> None:
    """Play the scheduler up to `until`: each job's due entries dispatched 3 s ahead (as a tick works ahead), the
    clock then at the entry's instant while the executor runs what became due."""
    dispatcher = Dispatcher(rt.store, clock)
    while True:
        jobs = [rt.store.jobs.get(JobKey(SUB, RG, collection, name)) for name in names]
        due = sorted(((j.next_execution_time, j) for j in jobs if j and j.next_execution_time), key=lambda d: d[0])
        if not due or due[0][0] > until:
            return
        instant, job = due[0]
        clock.current = max(clock.current, instant - timedelta(seconds=3))
        advanced = dispatcher.dispatch(job, instant, clock.now())
        assert advanced is not None and advanced.dispatched_occurrence is not None
        clock.current = instant
        drain(rt, PATIENCE, until=partial(ran, rt, job.key.job, stamp(advanced.dispatched_occurrence), collection))


def test_skipped_moved_added_and_paused_occurrences_fire_as_their_exceptions_say(
    settings, clock: ManualClock, http_target
) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    t = clock.now().replace(second=0) + 3 * MIN  # beyond the API's own dispatch
    moved, extra, until = t + 2 * MIN + timedelta(seconds=20), t + 3 * MIN + timedelta(seconds=40), t + 3.5 * MIN
    put_job(
        rt,
        "excepted",
        http_target.url,
        t,
        exceptions=[
            {"type": "Skip", "occurrence": stamp(t + MIN), "note": "holiday"},
            {"type": "Move", "occurrence": stamp(t + 2 * MIN), "moveTo": stamp(moved)},
            {"type": "Add", "occurrence": stamp(extra)},
        ],
    )
    put_job(rt, "paused", http_target.url, t, pause={"until": stamp(until), "note": "deploy"})

    step(rt, clock, ["excepted", "paused"], t + 4 * MIN)

    assert fired(http_target, "excepted") == [stamp(x) for x in (t, moved, t + 3 * MIN, extra, t + 4 * MIN)]
    runs = ledger(rt, "excepted")
    for instant in (t, moved, t + 3 * MIN, extra, t + 4 * MIN):  # each at its own second
        assert runs[stamp(instant)]["status"] == "Completed" and runs[stamp(instant)]["startTime"] == stamp(instant)
    skipped, moved_away = runs[stamp(t + MIN)], runs[stamp(t + 2 * MIN)]
    assert (skipped["status"], skipped["reason"]) == ("Skipped", "Excepted") and "holiday" in skipped["message"]
    assert moved_away["reason"] == "Moved" and stamp(moved) in moved_away["message"]
    assert (runs[stamp(moved)]["reason"], runs[stamp(extra)]["reason"]) == ("Moved", "Extra")  # runs put there
    assert "reason" not in runs[stamp(t)]

    assert fired(http_target, "paused") == [stamp(t + 3 * MIN), stamp(t + 4 * MIN)]
    held = ledger(rt, "paused")
    resumed = held[stamp(t + 3 * MIN)]
    assert resumed["status"] == "Completed" and resumed["startTime"] == stamp(until)  # at the pause's end
    for instant in (t, t + MIN, t + 2 * MIN):
        entry = held[stamp(instant)]
        assert (entry["status"], entry["reason"]) == ("Skipped", "Paused") and "deploy" in entry["message"], entry
    assert held[stamp(t + 4 * MIN)]["startTime"] == stamp(t + 4 * MIN)


def test_a_collections_pause_holds_each_occurrence_at_its_second_and_ends_by_itself(
    settings, clock: ManualClock, http_target
) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt, collection="held")
    t = clock.now().replace(second=0) + 3 * MIN
    until = t + 1.5 * MIN
    pause = {"properties": {"pause": {"until": stamp(until), "note": "quiet hours"}}}
    answer = call(rt, "JobCollections_Patch", "PATCH", body=pause, query=NEWER, collection="held")
    assert answer.status == 200, answer.body
    assert answer.body["properties"]["pause"] == pause["properties"]["pause"]
    put_job(rt, "minutely", http_target.url, t, collection="held")

    step(rt, clock, ["minutely"], t + 3 * MIN, collection="held")

    assert fired(http_target, "minutely") == [stamp(t + 2 * MIN), stamp(t + 3 * MIN)]  # from the first after until
    entries = ledger(rt, "minutely", "held")
    for instant in (t, t + MIN):
        entry = entries[stamp(instant)]
        assert (entry["status"], entry["reason"]) == ("Skipped", "Paused") and "quiet hours" in entry["message"]


def test_a_repeated_wall_time_runs_twice_under_both_and_the_ledger_marks_each_run(
    settings, clock: ManualClock, http_target
) -> None:
    # New York falls back on 2026-11-01 at 02:00 EDT (06:00Z): 01:30 is read at 05:30Z (EDT) and 06:30Z (EST).
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    clock.current = datetime.fromisoformat("2026-10-31T12:00:00+00:00")
    recurrence = {
        "frequency": "Day",
        "schedule": {"hours": [1], "minutes": [30]},
        "timeZone": "America/New_York",
        "dstPolicy": {"fold": "Both"},
    }
    properties = {
        "startTime": "2026-10-31T00:00:00Z",
        "recurrence": recurrence,
        "action": {"type": "Http", "request": {"uri": http_target.url, "method": "POST"}},
    }
    answer = call(rt, "Jobs_CreateOrUpdate", "PUT", "both", {"properties": properties}, query=NEWER)
    assert answer.status == 201, answer.body
    first, second = (datetime.fromisoformat(f"2026-11-01T0{h}:30:00+00:00") for h in (5, 6))

    step(rt, clock, ["both"], second)

    assert fired(http_target, "both") == [stamp(first), stamp(second)]
    entries = ledger(rt, "both")
    assert [entries[stamp(x)].get("dstShift") for x in (first, second)] == ["Fold", "FoldSecond"]
    assert all(entries[stamp(x)]["status"] == "Completed" for x in (first, second))
