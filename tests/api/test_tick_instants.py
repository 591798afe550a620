"""Instants with 7 fractional digits, as .NET clients write them, are echoed exactly as sent: the recorded
service answered `"startTime": "2017-02-09T23:55:25.5648511Z"` and `"endTime": "2017-02-12T23:55:27.7949296Z"`
in PUT, GET and list answers (docs/wire-contract.md §7). The 100 ns tick is kept through the store (PUT,
PATCH, GET, the jobs list plain and filtered); scheduling stays to the second.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from shared.runtime import Runtime

JC, JOB = "jc", "j"
START = "2026-03-02T23:55:25.5648511Z"  # the recorded values' digits, a day after the clock fixture's instant
END = "2026-03-05T23:55:27.7949296Z"


@pytest.fixture
def runtime(settings, clock) -> Iterator[Runtime]:
    runtime = Runtime.create(settings, clock=clock)
    yield runtime
    runtime.close()


@pytest.fixture
def jobs_api(inproc):
    inproc.put_collection(JC)
    return inproc


def _instants(answer: dict[str, Any]) -> tuple[str, str]:
    properties = answer["properties"]
    return properties["startTime"], properties["recurrence"]["endTime"]


def _reads(jobs_api) -> list[dict[str, Any]]:
    """The job as GET, the jobs list and the filtered, capped jobs list answer it (all the same)."""
    got = jobs_api.get_job(JC, JOB)
    assert got.status == 200, got.body
    listed = jobs_api.call("Jobs_List", "GET", JC)
    filtered = jobs_api.call(
        "Jobs_List", "GET", JC, query={"api-version": "2016-03-01", "$filter": "state eq 'Enabled'", "$top": "10"}
    )
    assert listed.status == filtered.status == 200
    return [got.body, *listed.body["value"], *filtered.body["value"]]


def test_seven_digits_are_echoed_by_put_get_and_lists(jobs_api) -> None:
    body = {
        "properties": {
            "startTime": START,
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
            "recurrence": {"frequency": "Minute", "count": 10, "endTime": END},
        }
    }
    put = jobs_api.put_job(JC, JOB, body).body
    assert _instants(put) == (START, END)
    reads = _reads(jobs_api)
    assert [_instants(answer) for answer in reads] == [(START, END)] * 3
    assert all(answer == put for answer in reads)
    # Scheduled to the second, as every occurrence is.
    assert put["properties"]["status"]["nextExecutionTime"] == "2026-03-02T23:55:25Z"


def test_seven_digits_survive_patch_and_a_patch_sets_them_exactly(jobs_api) -> None:
    jobs_api.put_job(
        JC,
        JOB,
        {
            "properties": {
                "startTime": START,
                "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
                "recurrence": {"frequency": "Hour", "endTime": END},
            }
        },
    )
    untouched = jobs_api.call(
        "Jobs_Patch",
        "PATCH",
        JC,
        JOB,
        body={"properties": {"action": {"request": {"uri": "http://127.0.0.1:9/other"}}}},
    )
    assert untouched.status == 200, untouched.body
    assert _instants(untouched.body) == (START, END)

    # An offset is normalised to UTC; the tick is untouched by it. Trailing zeros are trimmed (as .NET writes).
    patched = jobs_api.call(
        "Jobs_Patch",
        "PATCH",
        JC,
        JOB,
        body={
            "properties": {
                "startTime": "2026-03-03T00:55:25.0000001+01:00",
                "recurrence": {"endTime": "2026-03-06T23:55:27.1234560Z"},
            }
        },
    )
    assert patched.status == 200, patched.body
    expected = ("2026-03-02T23:55:25.0000001Z", "2026-03-06T23:55:27.123456Z")
    assert _instants(patched.body) == expected
    assert [_instants(answer) for answer in _reads(jobs_api)] == [expected] * 3


def test_the_official_client_reads_seven_digits(client, jobs_api) -> None:
    jobs_api.put_job(
        JC,
        JOB,
        {
            "properties": {
                "startTime": START,
                "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
            }
        },
    )
    job = client.jobs.get(jobs_api.RG, JC, JOB)
    assert job.properties.start_time.isoformat() == "2026-03-02T23:55:25.564851+00:00"  # Python stops at the µs
