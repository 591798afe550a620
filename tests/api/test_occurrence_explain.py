"""GET .../jobs/{job}/occurrences/{instant} (newer api-version only): one instant of a job explained, through the API
on a hand-moved clock. An hourly job with a pause (held occurrences let go or run at its end, with the note) and a
skip exception: a plain future occurrence, the skipped one, one the pause holds, an instant that is no occurrence;
then the pause's end through the real dispatcher, queue, executor and a real local HTTP target (Azurite), after
which the held occurrence that ran is Ran and the ones let go are Skipped by the pause. Refusals: a bad instant,
a missing job, 2016-03-01. And the route as a real HTTP server serves it, `:` as it is or percent-encoded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import requests

from shared import api
from shared.dispatcher import Dispatcher
from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from tests.api.conftest import ApiServer, InProcess
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
HOUR = timedelta(hours=1)
PATIENCE = 60.0  # seconds of real time for the executor and the recorder on a busy machine


def z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def explain(rt: Runtime, job: str, instant: str, query: dict[str, str] | None = None) -> api.ApiResponse:
    """The request function_app.py builds for the route (its `instant` segment as the host decodes it)."""
    route = {"subscriptionId": SUB, "resourceGroupName": RG, "jobCollectionName": JC, "jobName": job}
    path = f"/api/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}/jobs/{job}"
    request = api.ApiRequest(
        "GET",
        f"http://127.0.0.1:7071{path}/occurrences/{instant}",
        {**route, "instant": instant},
        NEWER if query is None else query,
        b"",
    )
    return api.handle("Jobs_GetOccurrence", request, rt)


def explained(rt: Runtime, instant: datetime, job: str = "hourly") -> dict[str, Any]:
    answer = explain(rt, job, z(instant))
    assert answer.status == 200, answer.body
    assert answer.body["occurrenceTime"] == z(instant)
    return dict(answer.body)


def ledger_status(rt: Runtime, job: str, instant: datetime) -> str | None:
    answer = call(rt, "Jobs_ListJobHistory", "GET", job, query=NEWER)
    assert answer.status == 200, answer.body
    found = [e["properties"] for e in answer.body["value"] if e["properties"]["occurrenceTime"] == z(instant)]
    return found[0]["status"] if found else None


def test_explain_answers_for_each_rule_and_then_for_what_ran(settings, clock: ManualClock, http_target) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    t0 = clock.now().replace(minute=0, second=0) + HOUR  # the hourly series: 13:00, 14:00, ...
    until = t0 + 2.5 * HOUR  # 15:30: the pause holds 13:00, 14:00 and 15:00; Latest runs 15:00 at its end
    skipped = t0 + 4 * HOUR  # 17:00
    properties = {
        "startTime": z(t0),
        "recurrence": {"frequency": "Hour"},
        "action": {
            "type": "Http",
            "request": {"uri": http_target.url, "method": "POST"},
            "retryPolicy": {"retryType": "None"},
        },
        "pause": {"until": z(until), "note": "migration"},
        "exceptions": [{"type": "Skip", "occurrence": z(skipped), "note": "holiday"}],
    }
    written = call(rt, "Jobs_CreateOrUpdate", "PUT", "hourly", {"properties": properties}, query=NEWER)
    assert written.status == 201, written.body

    plain = explained(rt, t0 + 5 * HOUR)
    assert (plain["verdict"], plain["reason"], plain["fireTime"]) == ("WillRun", "Schedule", z(t0 + 5 * HOUR))
    assert (plain["isOccurrence"], plain["nominal"]) == (True, True)
    assert plain["message"] == f"Will run at {z(t0 + 5 * HOUR)}."

    excepted = explained(rt, skipped)
    assert (excepted["verdict"], excepted["reason"], excepted["isOccurrence"]) == ("WillNotRun", "Excepted", False)
    assert excepted["exception"] == {"type": "Skip", "occurrence": z(skipped), "note": "holiday"}
    assert "skipped by an exception of the job (holiday)" in excepted["message"] and "fireTime" not in excepted

    nowhere = explained(rt, t0 + 5.5 * HOUR)
    assert (nowhere["verdict"], nowhere["nearest"]) == ("NotAnOccurrence", [z(t0 + 5 * HOUR), z(t0 + 6 * HOUR)])
    assert (nowhere["isOccurrence"], nowhere["nominal"]) == (False, False)

    held = explained(rt, t0 + HOUR)
    assert (held["verdict"], held["reason"], held["pause"]) == (
        "WillNotRun",
        "Paused",
        {"until": z(until), "note": "migration"},
    )
    assert f"Held by the job's pause until {z(until)} (migration)" in held["message"]
    last_held = explained(rt, t0 + 2 * HOUR)
    assert (last_held["verdict"], last_held["reason"], last_held["fireTime"]) == ("WillRun", "Paused", z(until))

    # The pause ends: the dispatcher's resume queues 15:00 (visible at once, due at 15:30) and lets the others go.
    key = JobKey(SUB, RG, JC, "hourly")
    job = rt.store.jobs.get(key)
    assert job is not None and job.next_execution_time == until
    clock.current = until - timedelta(seconds=3)
    assert Dispatcher(rt.store, clock).dispatch(job, until, clock.now()) is not None
    clock.current = until
    drain(rt, PATIENCE, until=lambda: ledger_status(rt, "hourly", t0 + 2 * HOUR) == "Completed")
    assert [h.headers["x-ms-scheduler-expected-execution-time"] for h in http_target.requests] == [z(t0 + 2 * HOUR)]

    ran = explained(rt, t0 + 2 * HOUR)
    assert (ran["verdict"], ran["reason"], ran["status"], ran["attempts"]) == ("Ran", "Schedule", "Completed", 1)
    assert ran["message"].startswith("Ran at ") and ran["message"].endswith(" after 1 attempt.")
    let_go = explained(rt, t0 + HOUR)
    assert (let_go["verdict"], let_go["reason"], let_go["status"]) == ("Skipped", "Paused", "Skipped")
    assert let_go["message"] == f"Skipped: the job was paused until {z(until)}: migration."
    assert explained(rt, t0 + 5 * HOUR)["verdict"] == "WillRun"  # what follows is untouched


def test_explain_refuses_a_bad_instant_a_missing_job_and_the_old_version(settings, clock: ManualClock) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    body = {"properties": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}}}
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "once", body, query=NEWER).status == 201
    at = z(clock.now() + HOUR)
    for bad in ("tomorrow", "2026-13-01T00:00:00Z", "1700000000", f" {at}", ""):
        refused = explain(rt, "once", bad)
        assert refused.status == 400, (bad, refused.body)
        assert refused.body["error"]["code"] == "BadRequest" and "instant" in refused.body["error"]["message"]
    missing = explain(rt, "missing", at)
    assert missing.status == 404 and missing.body["error"]["code"] == "NotFound", missing.body
    old = explain(rt, "once", at, {"api-version": "2016-03-01"})
    assert old.status == 400 and PREVIEW_API_VERSION in old.body["error"]["message"]
    # An offset is read as a job body's instants are: the same instant in UTC.
    shifted = explain(rt, "once", (clock.now() + HOUR).strftime("%Y-%m-%dT%H:%M:%S") + "+00:00")
    assert shifted.status == 200 and shifted.body["occurrenceTime"] == at


def test_the_route_serves_the_instant_as_a_path_segment(api_server: ApiServer, inproc: InProcess) -> None:
    start = datetime.now(UTC).replace(hour=9, minute=0, second=0, microsecond=0) + timedelta(days=10)
    inproc.put_collection("jc")
    inproc.put_job("jc", "j", inproc.http_job(startTime=z(start), recurrence={"frequency": "Day"}))
    base = (
        f"{api_server.url}/subscriptions/{inproc.SUB}/resourceGroups/{inproc.RG}/providers/Microsoft.Scheduler/"
        "jobCollections/jc/jobs/j/occurrences"
    )
    second = start + timedelta(days=1)
    for segment in (z(second), z(second).replace(":", "%3A"), (second + HOUR).strftime("%Y-%m-%dT%H:%M:%S+01:00")):
        answer = requests.get(f"{base}/{segment}", params=NEWER, timeout=30)
        assert answer.status_code == 200, (segment, answer.text)
        assert (answer.json()["occurrenceTime"], answer.json()["verdict"]) == (z(second), "WillRun"), segment
