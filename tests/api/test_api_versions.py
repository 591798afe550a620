"""Two api-versions of one provider (docs/wire-contract.md §8): 2016-03-01 answers as the recorded service did,
with no extension property; 2026-12-01-preview shows the extensions (recurrence.timeZone, retryType
Exponential with maxRetryInterval). Every version accepts every property, and a write made with 2016-03-01
keeps the stored properties it does not know, so the official 2016-03-01 client's read-modify-write leaves a
Europe/London schedule in Europe/London.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from shared.console.pages import handle as console
from shared.model.versions import NEWEST, STABLE, VERSIONS
from shared.runtime import Runtime

JC, JOB = "jc", "j"
RG = "rg-api"
OLD, NEW = {"api-version": STABLE}, {"api-version": NEWEST.name}
ZONED = {"frequency": "Day", "interval": 1, "schedule": {"hours": [9], "minutes": [0]}, "timeZone": "Europe/London"}
EXPONENTIAL = {"retryType": "Exponential", "retryInterval": "PT20S", "retryCount": 5, "maxRetryInterval": "PT10M"}


@pytest.fixture
def runtime(settings, clock) -> Iterator[Runtime]:
    runtime = Runtime.create(settings, clock=clock)
    yield runtime
    runtime.close()


def _job(**properties: Any) -> dict[str, Any]:
    return {
        "properties": {
            "startTime": "2026-03-01T00:00:00Z",
            "action": {
                "type": "Http",
                "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
                "retryPolicy": EXPONENTIAL,
                "errorAction": {
                    "type": "Http",
                    "request": {"uri": "http://127.0.0.1:9/err", "method": "POST"},
                    "retryPolicy": {"retryType": "Exponential", "maxRetryInterval": "PT1H"},
                },
            },
            "recurrence": ZONED,
            **properties,
        }
    }


def _call(
    inproc,
    operation: str,
    method: str,
    version: dict[str, str],
    body: Any = None,
    job: str | None = JOB,
    expect: int = 200,
) -> Any:
    answer = inproc.call(operation, method, JC, job, body=body, query=version)
    assert answer.status == expect, answer.body
    return answer.body


def _extensions(answer: dict[str, Any]) -> list[Any]:
    action = answer["properties"]["action"]
    policies = (action["retryPolicy"], action["errorAction"]["retryPolicy"])
    return [
        answer["properties"]["recurrence"].get("timeZone"),
        *((p["retryType"], p.get("maxRetryInterval")) for p in policies),
    ]


SHOWN_NEW = ["Europe/London", ("exponential", "PT10M"), ("exponential", "PT1H")]
SHOWN_OLD = [None, ("fixed", None), ("fixed", None)]


@pytest.fixture
def jobs_api(inproc):
    inproc.put_collection(JC)
    return inproc


@pytest.mark.parametrize("written_in", [OLD, NEW])
def test_each_version_shows_what_it_knows_whichever_wrote_it(jobs_api, written_in) -> None:
    put = _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", written_in, _job(), expect=201)
    assert _extensions(put) == (SHOWN_OLD if written_in is OLD else SHOWN_NEW)  # 2016-03-01 accepts them
    for version, shown in ((OLD, SHOWN_OLD), (NEW, SHOWN_NEW)):
        got = _call(jobs_api, "Jobs_Get", "GET", version)
        assert _extensions(got) == shown
        assert _call(jobs_api, "Jobs_List", "GET", version, job=None)["value"] == [got]
    old = _call(jobs_api, "Jobs_Get", "GET", OLD)
    assert old["properties"]["action"]["retryPolicy"] == {
        "retryType": "fixed",
        "retryInterval": "PT20S",
        "retryCount": 5,
    }
    # 2016-03-01 answers the recorded shape: nothing the recorded service did not have.
    text = json.dumps(old)
    assert "timeZone" not in text and "maxRetryInterval" not in text and "xponential" not in text


def test_the_official_client_read_modify_write_keeps_the_time_zone(client, jobs_api, clock) -> None:
    clock.advance(timedelta(days=100))  # 2026-06-09T12:00:30Z: London is on summer time (UTC+1)
    _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEW, _job(), expect=201)
    assert _call(jobs_api, "Jobs_Get", "GET", NEW)["properties"]["status"]["nextExecutionTime"] == (
        "2026-06-10T08:00:00Z"
    )  # 09:00 in London

    job = client.jobs.get(RG, JC, JOB)  # azure-mgmt-scheduler: 2016-03-01, drops what it does not know
    assert job.properties.recurrence.schedule.hours == [9]
    job.properties.action.request.uri = "http://127.0.0.1:9/changed"
    job.properties.recurrence.schedule.hours = [10]
    written = client.jobs.create_or_update(RG, JC, JOB, job)
    assert written.properties.action.retry_policy.retry_type.lower() == "fixed"

    after = _call(jobs_api, "Jobs_Get", "GET", NEW)
    assert _extensions(after) == SHOWN_NEW  # timeZone and exponential retry are still there
    assert after["properties"]["recurrence"]["schedule"]["hours"] == [10]
    assert after["properties"]["action"]["request"]["uri"] == "http://127.0.0.1:9/changed"
    assert after["properties"]["status"]["nextExecutionTime"] == "2026-06-10T09:00:00Z"  # 10:00 in London

    patched = client.jobs.patch(RG, JC, JOB, client.jobs.get(RG, JC, JOB))  # PowerShell's full-object PATCH
    assert patched.properties.recurrence.schedule.hours == [10]
    assert _extensions(_call(jobs_api, "Jobs_Get", "GET", NEW)) == SHOWN_NEW


def test_the_official_client_read_modify_write_keeps_every_newer_job_property(client, jobs_api) -> None:
    newer = {"missedRunPolicy": {"type": "All", "maxRuns": 3}, "expectSuccessWithin": "PT2H"}
    put = _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEW, _job(**newer), expect=201)
    assert {k: put["properties"][k] for k in newer} == newer
    old = _call(jobs_api, "Jobs_Get", "GET", OLD)["properties"]
    assert not set(newer) & set(old)  # 2016-03-01 shows none of them

    job = client.jobs.get(RG, JC, JOB)
    job.properties.action.request.uri = "http://127.0.0.1:9/changed"
    client.jobs.create_or_update(RG, JC, JOB, job)
    client.jobs.patch(RG, JC, JOB, client.jobs.get(RG, JC, JOB))

    after = _call(jobs_api, "Jobs_Get", "GET", NEW)["properties"]
    assert {k: after[k] for k in newer} == newer and _extensions({"properties": after}) == SHOWN_NEW
    assert after["action"]["request"]["uri"] == "http://127.0.0.1:9/changed"


def test_a_2016_write_may_still_set_or_remove_an_extension(jobs_api) -> None:
    _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEW, _job(), expect=201)
    _call(jobs_api, "Jobs_Patch", "PATCH", OLD, {"properties": {"recurrence": {"timeZone": "America/New_York"}}})
    assert _extensions(_call(jobs_api, "Jobs_Get", "GET", NEW))[0] == "America/New_York"
    _call(jobs_api, "Jobs_Patch", "PATCH", OLD, {"properties": {"recurrence": {"timeZone": None}}})
    assert _extensions(_call(jobs_api, "Jobs_Get", "GET", NEW))[0] is None
    # A retry policy the 2016 client changes to None is None: only the value it was shown is read as "unchanged".
    _call(jobs_api, "Jobs_Patch", "PATCH", OLD, {"properties": {"action": {"retryPolicy": {"retryType": "None"}}}})
    policy = _call(jobs_api, "Jobs_Get", "GET", NEW)["properties"]["action"]["retryPolicy"]
    assert policy["retryType"] == "none"


def test_an_unknown_api_version_names_the_supported_ones(jobs_api) -> None:
    answer = _call(jobs_api, "Jobs_Get", "GET", {"api-version": "2030-01-01"}, expect=400)
    assert answer["error"]["code"] == "MissingOrInvalidRequiredQueryParameter"
    assert STABLE in answer["error"]["message"] and NEWEST.name in answer["error"]["message"]


def _document(api_server, name: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{api_server.url}/{name}") as response:
        assert response.status == 200
        return dict(json.load(response))


def test_each_version_has_its_own_openapi_document(api_server) -> None:
    old, new = _document(api_server, "openapi.json"), _document(api_server, f"openapi-{NEWEST.name}.json")
    assert (old["info"]["version"], new["info"]["version"]) == (STABLE, NEWEST.name)
    for document, known in ((old, False), (new, True)):
        schemas = document["components"]["schemas"]
        assert ("timeZone" in schemas["JobRecurrence"]["properties"]) is known
        assert ("maxRetryInterval" in schemas["RetryPolicy"]["properties"]) is known
        assert ("Exponential" in schemas["RetryType"]["enum"]) is known
        operations = [op for path in document["paths"].values() for op in path.values()]
        scheduler = [op for op in operations if op["tags"][0] in ("JobCollections", "Jobs")]
        # The newer version adds the occurrences preview, an occurrence's explanation, backfill, the attempts list and
        # the collection's forecast.
        assert len(scheduler) == (20 if known else 15)
        enums = {
            p["schema"]["$ref"].rsplit("/", 1)[1]
            for op in scheduler
            for p in op["parameters"]
            if p["name"] == "api-version"
        }
        assert [schemas[name]["enum"][0] for name in enums] == [document["info"]["version"]]


def test_the_cli_and_the_console_use_the_newest_version() -> None:
    from scheduler_cli.client import API_VERSION

    assert API_VERSION == NEWEST.name == max(VERSIONS.values(), key=lambda v: v.rank).name
    shell = console("GET", "", "http://127.0.0.1:7071/api/console/", b"").body.decode("utf-8")
    assert f'<meta name="scheduler-api-version" content="{NEWEST.name}">' in shell


def test_the_newer_version_refuses_a_member_it_does_not_know_and_2016_ignores_it(jobs_api) -> None:
    misspelt = _job()
    misspelt["properties"]["recurence"] = misspelt["properties"].pop("recurrence")
    refused = jobs_api.call("Jobs_CreateOrUpdate", "PUT", JC, JOB, body=misspelt, query=NEW)
    assert refused.status == 400 and refused.body["error"]["code"] == "BadRequest"
    assert refused.body["error"]["message"].startswith("properties.recurence: ")
    assert "recurrence" in refused.body["error"]["message"]  # the likely meaning
    assert jobs_api.call("Jobs_Get", "GET", JC, JOB, query=NEW).status == 404  # nothing stored
    misplaced = _job()
    misplaced["properties"]["action"]["request"]["retryPolicy"] = EXPONENTIAL
    patched = jobs_api.call("Jobs_CreateOrUpdate", "PUT", JC, JOB, body=misplaced, query=NEW)
    assert patched.status == 400 and patched.body["error"]["message"].startswith(
        "properties.action.request.retryPolicy: "
    )
    # 2016-03-01 stays lenient, as the real service was: the member is ignored.
    assert (
        _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", OLD, misspelt, expect=201)["properties"].get("recurrence") is None
    )
    refused_patch = jobs_api.call("Jobs_Patch", "PATCH", JC, JOB, body={"properties": {"stat": "Disabled"}}, query=NEW)
    assert refused_patch.status == 400 and refused_patch.body["error"]["message"].startswith("properties.stat: ")
    collection = jobs_api.call(
        "JobCollections_CreateOrUpdate",
        "PUT",
        "other",
        None,
        query=NEW,
        body={"location": "West US", "properties": {"sku": {"name": "Standard"}, "quotas": {}}},
    )
    assert collection.status == 400 and collection.body["error"]["message"].startswith("properties.quotas: ")


def test_a_2016_collection_put_keeps_the_newer_history_retention(inproc) -> None:
    retention = {"maxEntriesPerJob": 50, "maxAge": "P7D"}
    body = {"location": "West US", "properties": {"sku": {"name": "Standard"}, "historyRetention": retention}}
    made = inproc.call("JobCollections_CreateOrUpdate", "PUT", "kept", None, body=body, query=NEW)
    assert made.status == 201, made.body
    old = inproc.call("JobCollections_Get", "GET", "kept", None, query=OLD).body
    assert "historyRetention" not in old["properties"]  # 2016-03-01 does not show it
    again = inproc.call("JobCollections_CreateOrUpdate", "PUT", "kept", None, body=old, query=OLD)  # write it back
    assert again.status == 201, again.body
    after = inproc.call("JobCollections_Get", "GET", "kept", None, query=NEW).body
    assert {k: after["properties"]["historyRetention"][k] for k in retention} == retention
