"""A job created without `startTime` shows none: the recorded service left it out of every answer (PUT, GET,
lists) and showed only `status.nextExecutionTime` (docs/wire-contract.md §7, open question 15: no).

The job still runs from its creation, and keeps that anchor when it is written back without a startTime, so a
client that reads it and writes it back (PUT, PowerShell's full-object PATCH, the official SDK's
read-modify-write) sends no start time it never set and leaves the job exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from shared.runtime import Runtime

JC, JOB = "jc", "j"
# The `clock` fixture's instant is 2026-03-01T12:00:30Z: an hourly job created then runs at once (queued by the
# write itself), and its next occurrence, the one its status shows, is an hour later.
NEXT = "2026-03-01T13:00:30Z"


@pytest.fixture
def runtime(settings, clock) -> Iterator[Runtime]:
    """The test's runtime on the manual clock (overrides conftest's), so a write-back can happen later."""
    runtime = Runtime.create(settings, clock=clock)
    yield runtime
    runtime.close()


@pytest.fixture
def jobs_api(inproc):
    inproc.put_collection(JC)
    return inproc


def _hourly(**properties: Any) -> dict[str, Any]:
    body = {
        "properties": {
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
            "recurrence": {"frequency": "Hour", "interval": 1},
            **properties,
        }
    }
    return body


def _listed(jobs_api, **query: str) -> list[dict[str, Any]]:
    answer = jobs_api.call("Jobs_List", "GET", JC, query={"api-version": "2016-03-01", **query})
    assert answer.status == 200, answer.body
    return list(answer.body["value"])


def test_no_start_time_in_any_answer_only_the_next_execution(jobs_api) -> None:
    put = jobs_api.put_job(JC, JOB, _hourly()).body
    assert "startTime" not in put["properties"]
    assert put["properties"]["status"]["nextExecutionTime"] == NEXT  # it runs from its creation
    got = jobs_api.get_job(JC, JOB).body
    assert "startTime" not in got["properties"] and got == put
    assert _listed(jobs_api) == [got]
    assert _listed(jobs_api, **{"$filter": "state eq 'Enabled'", "$top": "5"}) == [got]


def test_a_job_read_and_put_back_later_is_unchanged(jobs_api, clock) -> None:
    jobs_api.put_job(JC, JOB, _hourly())
    clock.advance(timedelta(minutes=10))
    got = jobs_api.get_job(JC, JOB).body
    assert got["properties"]["status"]["nextExecutionTime"] == NEXT

    again = jobs_api.put_job(JC, JOB, got, expect=200).body
    assert again == got  # no startTime sent, none shown, and the schedule still anchored at the creation
    assert jobs_api.get_job(JC, JOB).body == got
    assert _listed(jobs_api) == [got]


def test_a_full_object_patch_of_the_read_job_is_unchanged(jobs_api, clock) -> None:
    jobs_api.put_job(JC, JOB, _hourly())
    clock.advance(timedelta(minutes=25))
    got = jobs_api.get_job(JC, JOB).body
    patched = jobs_api.call("Jobs_Patch", "PATCH", JC, JOB, body={"properties": {**got["properties"], "state": None}})
    assert patched.status == 200, patched.body
    assert patched.body == got


def test_an_explicit_start_time_is_shown_and_can_be_taken_away(jobs_api, clock) -> None:
    start = "2026-03-01T12:45:00Z"
    assert jobs_api.put_job(JC, JOB, _hourly(startTime=start)).body["properties"]["startTime"] == start
    clock.advance(timedelta(minutes=5))
    dropped = jobs_api.call("Jobs_Patch", "PATCH", JC, JOB, body={"properties": {"startTime": None}})
    assert dropped.status == 200, dropped.body
    # Without a startTime it is anchored where it was rewritten, and shows none.
    assert "startTime" not in dropped.body["properties"]
    assert dropped.body["properties"]["status"]["nextExecutionTime"] == "2026-03-01T13:05:30Z"


def test_the_official_client_read_modify_write_sends_no_start_time(client, clock, api_server) -> None:
    from azure.mgmt.scheduler import models as m

    client.job_collections.create_or_update(
        "rg-api",
        JC,
        m.JobCollectionDefinition(location="westus", properties=m.JobCollectionProperties(sku=m.Sku(name="Standard"))),
    )
    client.jobs.create_or_update(
        "rg-api",
        JC,
        JOB,
        m.JobDefinition(
            properties=m.JobProperties(
                action=m.JobAction(type="Http", request=m.HttpRequest(uri="http://127.0.0.1:9/", method="GET")),
                recurrence=m.JobRecurrence(frequency="Hour", interval=1),
            )
        ),
    )
    clock.advance(timedelta(minutes=10))
    job = client.jobs.get("rg-api", JC, JOB)
    assert job.properties.start_time is None
    job.properties.action.request.uri = "http://127.0.0.1:9/changed"
    written = client.jobs.create_or_update("rg-api", JC, JOB, job)
    assert written.properties.start_time is None
    assert written.properties.status.next_execution_time == job.properties.status.next_execution_time


def test_a_job_anchored_at_an_end_time_long_past_reads_back(jobs_api) -> None:
    # No startTime and an endTime before the year 1601, where a table's DateTime starts: created Completed, and
    # its anchor (that endTime) is stored so that it reads back.
    put = jobs_api.put_job(JC, JOB, _hourly(recurrence={"frequency": "Hour", "endTime": "0001-01-01T00:00:01Z"})).body
    assert put["properties"]["state"] == "completed" and "startTime" not in put["properties"]
    assert jobs_api.get_job(JC, JOB).body == put
    assert _listed(jobs_api) == [put]
