"""The job page's backfill (shared/console/backfill.py, POST console/backfill): the form's interval, typed as
wall-clock times in the job's zone or as durations back from now, becomes the what-if and the run the page sends,
the same interval in UTC; what it cannot send is refused naming the field. Against the real function_app.py
under the local host, the API takes both requests as they are: the what-if queues nothing, the run queues the
occurrences the what-if listed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import requests

from shared.console.pages import handle
from shared.model.versions import PREVIEW

NOW = datetime(2026, 3, 30, 12, 0, 30, 500000, tzinfo=UTC)
JOB = "/subscriptions/s/resourceGroups/g/providers/Microsoft.Scheduler/jobCollections/c/jobs/nightly"


def _plan(**form: Any) -> tuple[int, dict[str, Any]]:
    answer = handle("POST", "backfill", "http://127.0.0.1:7071/api/console/backfill", json.dumps(form).encode(), NOW)
    return answer.status, json.loads(answer.body)


def test_wall_clock_times_are_read_in_the_jobs_zone_and_the_run_is_the_interval_previewed() -> None:
    status, answer = _plan(job=JOB, **{"from": "2026-03-28T09:00", "to": "2026-03-29T09:00"}, timeZone="Europe/Berlin")
    assert status == 200, answer
    run = {
        "method": "POST",
        "path": f"{JOB}/backfill",
        "query": {"api-version": PREVIEW},
        "body": {"from": "2026-03-28T08:00:00Z", "to": "2026-03-29T07:00:00Z"},  # CET, then CEST
    }
    assert answer == {"run": run, "preview": {**run, "query": {"api-version": PREVIEW, "whatIf": "true"}}}


def test_durations_go_back_from_now_and_no_end_is_now() -> None:
    status, answer = _plan(job=JOB, **{"from": "P1D"}, overlapPolicy="bufferone")
    assert status == 200, answer
    assert answer["run"]["body"] == {"from": "2026-03-29T12:00:30Z", "to": "2026-03-30T12:00:30Z"}
    assert answer["run"]["query"] == {"api-version": PREVIEW, "overlapPolicy": "BufferOne"}
    status, answer = _plan(job=JOB, **{"from": "2026-03-30T10:00:00+02:00", "to": "PT1M"}, timeZone="Asia/Tokyo")
    assert answer["run"]["body"] == {"from": "2026-03-30T08:00:00Z", "to": "2026-03-30T11:59:30Z"}  # offset wins


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"from": "yesterday"}, "from: 'yesterday' is neither a time"),
        ({}, "from: a time is required"),
        ({"from": "2026-03-30T11:00Z", "to": "2026-03-30T10:00Z"}, "from: 2026-03-30T11:00:00Z is not before the end"),
        ({"from": "P1D", "to": "2026-03-31T00:00Z"}, "to: 2026-03-31T00:00:00Z is after now"),
        ({"from": "2026-03-29T09:00", "timeZone": "europe/berlin"}, "did you mean 'Europe/Berlin'?"),
        ({"from": "P1D", "overlapPolicy": "Sometimes"}, "overlapPolicy: 'Sometimes' is not one of Allow, Skip"),
        ({"from": "P1D", "job": "https://elsewhere.example/jobs/x"}, "job: the job's resource path"),
    ],
)
def test_what_cannot_be_sent_is_refused_naming_the_field(form: dict[str, Any], message: str) -> None:
    status, answer = _plan(**{"job": JOB, **form})
    assert status == 400 and answer["error"]["code"] == "BadRequest"
    assert message in answer["error"]["message"]


COLLECTION = "/subscriptions/bf-sub/resourceGroups/bf-rg/providers/Microsoft.Scheduler/jobCollections/bf-jc"


def test_the_api_takes_the_preview_and_the_run_as_the_page_sends_them(host_url: str) -> None:
    newer = {"api-version": PREVIEW}
    made = requests.put(f"{host_url}{COLLECTION}", params=newer, json={"location": "westeurope"}, timeout=10)
    assert made.status_code in (200, 201), made.text
    start = (datetime.now(UTC) - timedelta(days=3)).replace(hour=0, minute=0, second=0, microsecond=0)
    job = {
        "startTime": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "recurrence": {"frequency": "Hour", "interval": 6, "timeZone": "Asia/Kolkata"},
        "action": {"type": "Http", "request": {"uri": f"{host_url}/openapi.json", "method": "GET"}},
    }
    path = f"{COLLECTION}/jobs/six-hourly"
    made = requests.put(f"{host_url}{path}", params=newer, json={"properties": job}, timeout=10)
    assert made.status_code in (200, 201), made.text
    since = (datetime.now(UTC) - timedelta(days=2)).astimezone(ZoneInfo("Asia/Kolkata"))  # typed on its clocks
    form = {"job": path, "from": since.strftime("%Y-%m-%dT%H:%M"), "to": "P1D", "timeZone": "Asia/Kolkata"}
    answer = handle("POST", "backfill", f"{host_url}/console/backfill", json.dumps(form).encode())
    assert answer.status == 200, answer.body
    planned = json.loads(answer.body)

    def send(request: dict[str, Any]) -> list[dict[str, Any]]:
        sent = requests.request(
            request["method"], f"{host_url}{request['path']}", params=request["query"], json=request["body"], timeout=10
        )
        assert sent.status_code == 200, sent.text
        return sent.json()["value"]

    would = send(planned["preview"])
    assert len(would) == 4  # every 6 hours over one day
    ledger = requests.get(f"{host_url}{path}/history", params=newer, timeout=10).json()["value"]
    assert ledger == []  # the what-if queued nothing
    queued = send(planned["run"])
    assert [o["occurrenceTime"] for o in queued] == [o["occurrenceTime"] for o in would]
