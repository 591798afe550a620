"""Writes of a job's occurrence control (newer api-version): exceptions, pause, DST policy and cron read back equal;
each bad one is a 400 naming what is wrong (the nearest occurrences for an instant that is not one) and changes
nothing stored; the official 2016-03-01 client's read-modify-write keeps all of them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from shared.model.versions import NEWEST, STABLE
from shared.runtime import Runtime

JC, JOB, RG = "jc", "j", "rg-api"
OLD, NEW = {"api-version": STABLE}, {"api-version": NEWEST.name}
ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}
# Daily at 09:00 in London from 2026-03-01 (the clock reads 2026-03-01T12:00:30Z): 2026-03-02T09:00Z is the next.
DAILY = {"frequency": "Day", "schedule": {"hours": [9], "minutes": [0]}, "timeZone": "Europe/London"}
CONTROL = {
    "exceptions": [
        {"type": "Skip", "occurrence": "2026-03-03T09:00:00Z", "note": "holiday"},
        {"type": "Move", "occurrence": "2026-03-04T09:00:00Z", "moveTo": "2026-03-04T10:30:00Z"},
        {"type": "Add", "occurrence": "2026-03-05T17:00:00Z"},
    ],
    "pause": {"until": "2026-03-10T00:00:00Z", "note": "migration"},
}


def body(recurrence: dict[str, Any] | None = None, **properties: Any) -> dict[str, Any]:
    return {
        "properties": {
            "startTime": "2026-03-01T00:00:00Z",
            "action": ACTION,
            "recurrence": recurrence or {**DAILY, "dstPolicy": {"gap": "Skip", "fold": "Both"}},
            **properties,
        }
    }


@pytest.fixture
def runtime(settings, clock, storage) -> Iterator[Runtime]:
    runtime = Runtime.create(settings, clock=clock, storage=storage)
    yield runtime
    runtime.close()


@pytest.fixture
def jobs_api(inproc):
    inproc.put_collection(JC)
    return inproc


def put(api, payload: dict[str, Any], expect: int, version: dict[str, str] = NEW, job: str = JOB) -> Any:
    answer = api.call("Jobs_CreateOrUpdate", "PUT", JC, job, body=payload, query=version)
    assert answer.status == expect, answer.body
    return answer.body


def get(api, version: dict[str, str] = NEW, job: str = JOB) -> dict[str, Any]:
    answer = api.call("Jobs_Get", "GET", JC, job, query=version)
    assert answer.status == 200, answer.body
    return answer.body["properties"]


def test_exceptions_pause_dst_policy_and_cron_read_back_equal(jobs_api) -> None:
    written = put(jobs_api, body(**CONTROL), 201)["properties"]
    assert {k: written[k] for k in CONTROL} == CONTROL
    assert written["recurrence"]["dstPolicy"] == {"gap": "Skip", "fold": "Both"}
    assert get(jobs_api)["pause"] == CONTROL["pause"]
    cron = {"cron": "30 9 * * 1-5", "timeZone": "Europe/Berlin"}
    shown = put(jobs_api, body(cron), 201, job="cron")["properties"]["recurrence"]
    assert shown["cron"] == "30 9 * * 1-5" and "frequency" not in shown
    old = get(jobs_api, OLD)
    assert not {"exceptions", "pause"} & set(old) and "dstPolicy" not in old["recurrence"]
    assert "cron" not in get(jobs_api, OLD, job="cron")["recurrence"]


@pytest.mark.parametrize(
    ("properties", "path", "words"),
    [
        (
            {"exceptions": [{"type": "Skip", "occurrence": "2026-03-03T09:30:00Z"}]},
            "properties.exceptions[0].occurrence",
            ["not an occurrence", "2026-03-03T09:00:00Z", "2026-03-04T09:00:00Z"],
        ),
        (
            {"exceptions": [{"type": "Move", "occurrence": "2026-03-03T09:00:00Z", "moveTo": "2026-03-04T09:00:00Z"}]},
            "properties.exceptions[0].moveTo",
            ["an occurrence of the job already"],
        ),
        (
            {"exceptions": [{"type": "Add", "occurrence": "2026-03-06T09:00:00Z"}]},
            "properties.exceptions[0].occurrence",
            ["an occurrence of the job already"],
        ),
        (
            {
                "exceptions": [
                    {"type": "Skip", "occurrence": "2026-03-03T09:00:00Z"},
                    {"type": "Move", "occurrence": "2026-03-03T09:00:00Z", "moveTo": "2026-03-03T10:00:00Z"},
                ]
            },
            "properties.exceptions[1]",
            ["one exception per instant"],
        ),
        (
            {"exceptions": [{"type": "Skip", "occurrence": "2026-03-01T09:00:00Z"}]},
            "properties.exceptions[0]",
            ["past"],
        ),
        (
            {"exceptions": [{"type": "Move", "occurrence": "2026-03-03T09:00:00Z"}]},
            "properties.exceptions[0]",
            ["moveTo"],
        ),
        ({"pause": {"until": "2026-03-01T12:00:00Z"}}, "properties.pause.until", ["later than now"]),
        ({"pause": {"note": "no end"}}, "properties.pause.until", ["required"]),
    ],
)
def test_each_bad_occurrence_control_is_a_400_that_changes_nothing(jobs_api, properties, path, words) -> None:
    put(jobs_api, body(**CONTROL), 201)
    before = get(jobs_api)
    answer = jobs_api.call("Jobs_CreateOrUpdate", "PUT", JC, JOB, body=body(**properties), query=NEW)
    assert answer.status == 400, answer.body
    message = answer.body["error"]["message"]
    assert message.startswith(path) and all(w in message for w in words), message
    assert get(jobs_api) == before


@pytest.mark.parametrize(
    ("recurrence", "path"),
    [
        ({"frequency": "Day", "dstPolicy": {"gap": "Skip"}}, "properties.recurrence.dstPolicy"),
        ({"frequency": "Day", "cron": "0 9 * * *"}, "properties.recurrence"),
        ({"cron": "0 9 * * *", "schedule": {"hours": [9]}}, "properties.recurrence"),
        ({"interval": 2}, "properties.recurrence.frequency"),
        ({"cron": "0 9 30 2 *"}, "properties.recurrence.cron"),
        ({"cron": "0 25 * * *"}, "properties.recurrence.cron"),
    ],
)
def test_a_bad_cron_or_dst_policy_is_a_400_naming_it(jobs_api, recurrence, path) -> None:
    answer = jobs_api.call("Jobs_CreateOrUpdate", "PUT", JC, JOB, body=body(recurrence), query=NEW)
    assert answer.status == 400 and answer.body["error"]["message"].startswith(path), answer.body
    assert jobs_api.call("Jobs_Get", "GET", JC, JOB, query=NEW).status == 404


def test_a_write_keeps_its_past_exceptions_and_prunes_the_long_past_ones(jobs_api, clock) -> None:
    put(jobs_api, body(**CONTROL), 201)
    clock.advance(timedelta(days=2, hours=1))  # 2026-03-03T13:00:30Z: the skip is past, by less than a day
    assert put(jobs_api, body(**CONTROL), 200)["properties"]["exceptions"] == CONTROL["exceptions"]
    clock.advance(timedelta(days=4))  # the skip, the move and the extra run are more than a day past
    assert put(jobs_api, body(**CONTROL), 200)["properties"]["exceptions"] == []


def test_the_official_client_read_modify_write_keeps_all_of_it(client, jobs_api) -> None:
    put(jobs_api, body(**CONTROL), 201)
    put(jobs_api, body({"cron": "30 9 * * 1-5", "timeZone": "Europe/Berlin", "count": 40}), 201, job="cron")
    for name in (JOB, "cron"):
        before = get(jobs_api, job=name)
        job = client.jobs.get(RG, JC, name)  # azure-mgmt-scheduler: 2016-03-01, drops what it does not know
        job.properties.action.request.uri = "http://127.0.0.1:9/changed"
        client.jobs.create_or_update(RG, JC, name, job)
        client.jobs.patch(RG, JC, name, client.jobs.get(RG, JC, name))  # PowerShell's full-object PATCH
        after = get(jobs_api, job=name)
        assert after["action"]["request"]["uri"] == "http://127.0.0.1:9/changed"
        for member in ("exceptions", "pause", "recurrence"):
            assert after.get(member) == before.get(member), member
