"""The members of issue 27 on the wire (docs/decisions.md, "Overlap, limits, long-running completion, spread"):
job `overlapPolicy` and `spreadWindow`, Http `request.asyncCompletion`, collection `maxConcurrentExecutions` and
`targetRateLimits` (and issue 40's `autoSpread`), the ledger's `waited`/`waitedFor` and Waiting status, and the
`overlapPolicy` override of run-now and backfill. They live in api-version 2026-12-01-preview: they read back
equal there, 2016-03-01 shows none of them, and a 2016-03-01 read-modify-write (the official client's included)
keeps them. A bad value is a 400 naming the member, and changes nothing stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from shared.keys import JobKey
from shared.model import JobExecutionStatus, LedgerReason, WaitCause
from shared.model.versions import NEWEST, STABLE
from shared.occurrence import OccurrenceBatch, Trigger, execution_id
from shared.records import LedgerEntry
from shared.runtime import Runtime
from tests.api.conftest import RG, SUB

JC, JOB = "jc", "j"
OLD, NEW = {"api-version": STABLE}, {"api-version": NEWEST.name}
ASYNC = {"deadline": "PT2H", "pollingInterval": "PT15S"}
JOB_MEMBERS = {"overlapPolicy": "BufferOne", "spreadWindow": "PT5M"}
LIMITS = {
    "maxConcurrentExecutions": 10,
    "targetRateLimits": [
        {"host": "api.example.com", "requestsPerSecond": 50},
        {"host": "*.Example.org", "requestsPerSecond": 0.5},
    ],
    "autoSpread": {"tolerance": "PT30S"},
}


@pytest.fixture
def runtime(settings, clock) -> Iterator[Runtime]:
    runtime = Runtime.create(settings, clock=clock)
    yield runtime
    runtime.close()


@pytest.fixture
def jobs_api(inproc):
    inproc.put_collection(JC)
    return inproc


def _job(**properties: Any) -> dict[str, Any]:
    return {
        "properties": {
            "startTime": "2026-03-01T00:00:00Z",
            "action": {
                "type": "Http",
                "request": {"uri": "http://127.0.0.1:9/", "method": "POST", "asyncCompletion": ASYNC},
                "errorAction": {
                    "type": "Http",
                    "request": {"uri": "http://127.0.0.1:9/err", "method": "POST", "asyncCompletion": {}},
                },
            },
            "recurrence": {"frequency": "Minute", "interval": 10},
            **properties,
        }
    }


def _call(inproc, operation: str, method: str, version: dict[str, str], body: Any = None, **kw: Any) -> Any:
    expect = kw.pop("expect", 200)
    answer = inproc.call(operation, method, kw.pop("collection", JC), kw.pop("job", JOB), body=body, query=version)
    assert answer.status == expect, answer.body
    return answer.body


def _members(answer: dict[str, Any]) -> dict[str, Any]:
    properties = answer["properties"]
    action = properties["action"]
    return {
        **{k: properties.get(k) for k in JOB_MEMBERS},
        "async": action["request"].get("asyncCompletion"),
        "errorAsync": action["errorAction"]["request"].get("asyncCompletion"),
    }


SHOWN = {**JOB_MEMBERS, "async": ASYNC, "errorAsync": {}}
HIDDEN = {"overlapPolicy": None, "spreadWindow": None, "async": None, "errorAsync": None}


def test_job_members_read_back_in_the_newer_version_and_are_hidden_in_2016(jobs_api) -> None:
    put = _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEW, _job(**JOB_MEMBERS), expect=201)
    assert _members(put) == SHOWN
    assert _members(_call(jobs_api, "Jobs_Get", "GET", NEW)) == SHOWN
    old = _call(jobs_api, "Jobs_Get", "GET", OLD)
    assert _members(old) == HIDDEN
    text = json.dumps(old)
    assert "overlapPolicy" not in text and "spreadWindow" not in text and "asyncCompletion" not in text
    assert _members(_call(jobs_api, "Jobs_List", "GET", OLD, job=None)["value"][0]) == HIDDEN


def test_a_2016_read_modify_write_keeps_them(jobs_api) -> None:
    _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEW, _job(**JOB_MEMBERS), expect=201)
    old = _call(jobs_api, "Jobs_Get", "GET", OLD)
    old["properties"]["action"]["request"]["uri"] = "http://127.0.0.1:9/changed"
    _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", OLD, {"properties": old["properties"]})
    _call(jobs_api, "Jobs_Patch", "PATCH", OLD, {"properties": {"recurrence": {"frequency": "Minute", "interval": 20}}})
    after = _call(jobs_api, "Jobs_Get", "GET", NEW)
    assert _members(after) == SHOWN
    assert after["properties"]["action"]["request"]["uri"] == "http://127.0.0.1:9/changed"


def test_the_official_client_read_modify_write_keeps_them(client, jobs_api, inproc) -> None:
    _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEW, _job(**JOB_MEMBERS), expect=201)
    inproc.put_collection("limited", **LIMITS)
    job = client.jobs.get(RG, JC, JOB)  # azure-mgmt-scheduler: 2016-03-01, drops what it does not know
    job.properties.action.request.uri = "http://127.0.0.1:9/changed"
    client.jobs.create_or_update(RG, JC, JOB, job)
    client.jobs.patch(RG, JC, JOB, client.jobs.get(RG, JC, JOB))
    assert _members(_call(jobs_api, "Jobs_Get", "GET", NEW)) == SHOWN
    collection = client.job_collections.get(RG, "limited")
    client.job_collections.create_or_update(RG, "limited", collection)
    after = _call(inproc, "JobCollections_Get", "GET", NEW, collection="limited", job=None)["properties"]
    assert {k: after[k] for k in LIMITS} == LIMITS


def test_collection_limits_read_back_and_are_hidden_in_2016(inproc) -> None:
    made = inproc.call(
        "JobCollections_CreateOrUpdate",
        "PUT",
        "limited",
        body={"location": "westus", "properties": {"sku": {"name": "Standard"}, **LIMITS}},
        query=NEW,
    )
    assert made.status == 201, made.body
    assert {k: made.body["properties"][k] for k in LIMITS} == LIMITS  # 0.5 stays 0.5, 50 stays 50
    got = _call(inproc, "JobCollections_Get", "GET", NEW, collection="limited", job=None)
    assert {k: got["properties"][k] for k in LIMITS} == LIMITS
    old = _call(inproc, "JobCollections_Get", "GET", OLD, collection="limited", job=None)
    assert not set(LIMITS) & set(old["properties"])
    listed = inproc.call("JobCollections_ListByResourceGroup", "GET", query=OLD).body["value"]
    assert all(not set(LIMITS) & set(c["properties"]) for c in listed)
    # 2016-03-01 writes it back: the limits stay; PATCH in the newer version changes one of them.
    _call(inproc, "JobCollections_CreateOrUpdate", "PUT", OLD, old, collection="limited", job=None, expect=201)
    patched = _call(
        inproc,
        "JobCollections_Patch",
        "PATCH",
        NEW,
        {"properties": {"maxConcurrentExecutions": 3}},
        collection="limited",
        job=None,
    )
    assert patched["properties"]["maxConcurrentExecutions"] == 3
    assert patched["properties"]["targetRateLimits"] == LIMITS["targetRateLimits"]


@pytest.mark.parametrize(
    ("members", "path", "words"),
    [
        ({"overlapPolicy": "Sometimes"}, "properties.overlapPolicy", "Allow"),
        ({"spreadWindow": "PT0S"}, "properties.spreadWindow", "PT1S"),
        ({"spreadWindow": "PT2H"}, "properties.spreadWindow", "PT1H"),
        ({"spreadWindow": "PT11M"}, "properties.spreadWindow", "PT10M"),  # the job runs every 10 minutes
        ({"spreadWindow": "soon"}, "properties.spreadWindow", "duration"),
    ],
)
def test_bad_job_members_are_refused_by_name(jobs_api, members, path, words) -> None:
    refused = jobs_api.call("Jobs_CreateOrUpdate", "PUT", JC, JOB, body=_job(**members), query=NEW)
    assert refused.status == 400, refused.body
    assert refused.body["error"]["message"].startswith(f"{path}: ") and words in refused.body["error"]["message"]
    assert jobs_api.call("Jobs_Get", "GET", JC, JOB, query=NEW).status == 404  # nothing stored


@pytest.mark.parametrize(
    ("completion", "path"),
    [
        ({"deadline": "PT10S"}, "properties.action.request.asyncCompletion.deadline"),
        ({"deadline": "P8D"}, "properties.action.request.asyncCompletion.deadline"),
        ({"pollingInterval": "PT0.5S"}, "properties.action.request.asyncCompletion.pollingInterval"),
        ({"polingInterval": "PT5S"}, "properties.action.request.asyncCompletion.polingInterval"),
    ],
)
def test_bad_async_completion_is_refused_by_name(jobs_api, completion, path) -> None:
    body = _job()
    body["properties"]["action"]["request"]["asyncCompletion"] = completion
    refused = jobs_api.call("Jobs_CreateOrUpdate", "PUT", JC, JOB, body=body, query=NEW)
    assert refused.status == 400 and refused.body["error"]["message"].startswith(f"{path}: "), refused.body


def test_a_spread_window_fits_a_one_shot_job_and_the_patch_that_shortens_the_interval_is_refused(jobs_api) -> None:
    one_shot = {"properties": {**_job()["properties"], "spreadWindow": "PT1H"}}
    del one_shot["properties"]["recurrence"]
    _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEW, one_shot, job="once", expect=201)
    _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEW, _job(spreadWindow="PT10M"), expect=201)
    refused = jobs_api.call(
        "Jobs_Patch", "PATCH", JC, JOB, body={"properties": {"recurrence": {"interval": 5}}}, query=NEW
    )
    assert refused.status == 400 and refused.body["error"]["message"].startswith("properties.spreadWindow: ")
    assert _call(jobs_api, "Jobs_Get", "GET", NEW)["properties"]["recurrence"]["interval"] == 10  # unchanged


@pytest.mark.parametrize(
    ("members", "path"),
    [
        ({"maxConcurrentExecutions": 0}, "properties.maxConcurrentExecutions"),
        ({"maxConcurrentExecutions": 1001}, "properties.maxConcurrentExecutions"),
        ({"targetRateLimits": [{"host": "https://api.example.com", "requestsPerSecond": 5}]}, "host"),
        ({"targetRateLimits": [{"host": "api.example.com:8443", "requestsPerSecond": 5}]}, "host"),
        ({"targetRateLimits": [{"host": "api.example.com", "requestsPerSecond": 0}]}, "requestsPerSecond"),
        ({"targetRateLimits": [{"host": "api.example.com", "requestsPerSecond": 5000}]}, "requestsPerSecond"),
        ({"targetRateLimits": [{"host": "api.example.com"}]}, "requestsPerSecond"),
        (
            {
                "targetRateLimits": [
                    {"host": "api.example.com", "requestsPerSecond": 5},
                    {"host": "API.example.com", "requestsPerSecond": 9},
                ]
            },
            "properties.targetRateLimits",
        ),
        (
            {"targetRateLimits": [{"host": f"h{n}.example.com", "requestsPerSecond": 1} for n in range(21)]},
            "properties.targetRateLimits",
        ),
        ({"autoSpread": {"tolerance": "PT0S"}}, "properties.autoSpread.tolerance"),
        ({"autoSpread": {"tolerance": "PT5M1S"}}, "properties.autoSpread.tolerance"),
        ({"autoSpread": {"tolerance": "PT1.5S"}}, "properties.autoSpread.tolerance"),
        ({"autoSpread": {"tolerance": "soon"}}, "properties.autoSpread.tolerance"),
        ({"autoSpread": {}}, "properties.autoSpread.tolerance"),
        ({"autoSpread": {"tolerance": "PT30S", "every": 3}}, "properties.autoSpread"),
    ],
)
def test_bad_collection_limits_are_refused_by_name(inproc, members, path) -> None:
    refused = inproc.call(
        "JobCollections_CreateOrUpdate",
        "PUT",
        "limited",
        body={"location": "westus", "properties": {"sku": {"name": "Standard"}, **members}},
        query=NEW,
    )
    assert refused.status == 400, refused.body
    message = refused.body["error"]["message"]
    assert message.startswith("properties.") and path in message.split(":", 1)[0], message
    assert inproc.call("JobCollections_Get", "GET", "limited", query=NEW).status == 404  # nothing stored


def _queued(rt: Runtime) -> list[Any]:
    messages = rt.store.queue.client.peek_messages(max_messages=32)
    return [item for m in messages for item in OccurrenceBatch.from_json(m.content).items]


def test_run_now_and_backfill_take_an_overlap_override_in_the_newer_version_only(jobs_api, runtime, clock) -> None:
    _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEW, _job(overlapPolicy="Skip"), expect=201)
    _call(jobs_api, "Jobs_Run", "POST", {**NEW, "overlapPolicy": "allow"})
    run = [m for m in _queued(runtime) if m.trigger == Trigger.RUN_NOW]
    assert [m.overlap.value if m.overlap else None for m in run] == ["Allow"]
    frm = (clock.now() - timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    to = clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    answer = jobs_api.call(
        "Jobs_Backfill", "POST", JC, JOB, body={"from": frm, "to": to}, query={**NEW, "overlapPolicy": "BufferOne"}
    )
    assert answer.status == 200 and len(answer.body["value"]) == 3, answer.body
    backfilled = [m for m in _queued(runtime) if m.trigger == Trigger.BACKFILL]
    assert len(backfilled) == 3 and {m.overlap.value for m in backfilled if m.overlap} == {"BufferOne"}
    stored = _call(jobs_api, "Jobs_Get", "GET", NEW)["properties"]
    assert stored["overlapPolicy"] == "Skip"  # nothing stored
    refused = jobs_api.call("Jobs_Run", "POST", JC, JOB, query={**NEW, "overlapPolicy": "Never"})
    assert refused.status == 400 and refused.body["error"]["message"].startswith("overlapPolicy: ")
    older = jobs_api.call("Jobs_Run", "POST", JC, JOB, query={**OLD, "overlapPolicy": "Allow"})
    assert older.status == 400 and NEWEST.name in older.body["error"]["message"]
    assert jobs_api.call("Jobs_Run", "POST", JC, JOB, query=OLD).status == 200  # 2016-03-01 as before
    assert len([m for m in _queued(runtime) if m.trigger == Trigger.RUN_NOW]) == 2  # the refused ones queued nothing


def test_the_ledger_shows_waits_in_the_newer_version(jobs_api, runtime, clock) -> None:
    _call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEW, _job(overlapPolicy="BufferOne"), expect=201)
    key = JobKey(SUB, RG, JC, JOB)
    now = clock.now()
    ran, waits = now - timedelta(minutes=10), now
    runtime.store.history.add_all(
        [],
        [
            LedgerEntry(
                key,
                execution_id(key, ran, Trigger.SCHEDULE),
                ran,
                "schedule",
                JobExecutionStatus.COMPLETED,
                "Http Action - Response from host '127.0.0.1': 'OK'",
                start_time=ran + timedelta(seconds=42),
                end_time=ran + timedelta(seconds=43),
                attempts=1,
                waited=timedelta(seconds=42),
                waited_for=WaitCause.CONCURRENCY,
            ),
            LedgerEntry(
                key,
                execution_id(key, waits, Trigger.SCHEDULE),
                waits,
                "schedule",
                JobExecutionStatus.WAITING,
                "Waiting for the previous occurrence of the job to end (overlapPolicy BufferOne).",
                reason=LedgerReason.WAITING_FOR_PREVIOUS,
                start_time=now,
            ),
        ],
    )
    entries = [e["properties"] for e in _call(jobs_api, "Jobs_ListJobHistory", "GET", NEW)["value"]]
    assert [(e["status"], e.get("reason"), e.get("waited"), e.get("waitedFor")) for e in entries] == [
        ("Waiting", "WaitingForPrevious", None, None),
        ("Completed", None, "PT42S", "Concurrency"),
    ]
    waiting = jobs_api.call("Jobs_ListJobHistory", "GET", JC, JOB, query={**NEW, "$filter": "status eq 'Waiting'"})
    assert [e["properties"]["status"] for e in waiting.body["value"]] == ["Waiting"]
    refused = jobs_api.call("Jobs_ListJobHistory", "GET", JC, JOB, query={**OLD, "$filter": "status eq 'Waiting'"})
    assert refused.status == 400 and refused.body["error"]["message"].startswith("$filter: ")


def _document(api_server, name: str) -> dict[str, Any]:
    import urllib.request

    with urllib.request.urlopen(f"{api_server.url}/{name}") as response:
        return dict(json.load(response))


def test_the_openapi_documents(api_server) -> None:
    old, new = _document(api_server, "openapi.json"), _document(api_server, f"openapi-{NEWEST.name}.json")
    for document, known in ((old, False), (new, True)):
        schemas = document["components"]["schemas"]
        for model, member in (
            ("JobProperties", "overlapPolicy"),
            ("JobProperties", "spreadWindow"),
            ("HttpRequest", "asyncCompletion"),
            ("JobCollectionProperties", "maxConcurrentExecutions"),
            ("JobCollectionProperties", "targetRateLimits"),
            ("JobHistoryProperties", "waited"),
            ("JobHistoryProperties", "waitedFor"),
        ):
            assert (member in schemas[model]["properties"]) is known, (model, member)
        assert ("AsyncCompletion" in schemas and "TargetRateLimit" in schemas) is known
        assert ("Waiting" in schemas["JobExecutionStatus"]["enum"]) is known
        run = next(p["post"] for path, p in document["paths"].items() if path.endswith("/run"))
        assert ("overlapPolicy" in {p["name"] for p in run["parameters"]}) is known
    assert new["components"]["schemas"]["OverlapPolicy"]["enum"] == ["Allow", "Skip", "BufferOne"]
