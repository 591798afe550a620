"""The whole flow in one process: API -> store -> dispatcher/queue -> executor -> HTTP target -> history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.dispatcher import Dispatcher
from shared.keys import CollectionKey
from shared.runtime import Runtime
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection


def test_collection_put_get(runtime: Runtime) -> None:
    make_collection(runtime)
    got = call(runtime, "JobCollections_Get", "GET")
    assert got.status == 200
    assert got.body["id"].endswith("/providers/Microsoft.Scheduler/jobCollections/jc1")
    assert got.body["type"] == "Microsoft.Scheduler/jobCollections"
    assert got.body["properties"] == {"sku": {"name": "Standard"}, "state": "Enabled"}
    again = call(runtime, "JobCollections_CreateOrUpdate", "PUT", body={"location": "West US", "properties": {}})
    assert again.status == 201  # a replacing PUT answers 201, as the recorded service did


def test_bad_input_gets_arm_errors_and_stores_nothing(runtime: Runtime) -> None:
    job = {"properties": {"action": {"type": "Http", "request": {"uri": "http://x/", "method": "GET"}}}}
    missing = call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", job)
    assert missing.status == 404 and missing.body["error"]["code"] == "ResourceNotFound"
    make_collection(runtime)
    invalid = call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", raw=b'{"properties": ')
    assert invalid.status == 400 and invalid.body["error"]["code"] == "BadRequest"
    assert "Traceback" not in invalid.body["error"]["message"]
    bad_hour = {
        "properties": {**job["properties"], "recurrence": {"frequency": "Day", "schedule": {"hours": [1, 2, 25]}}}
    }
    rejected = call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", bad_hour)
    assert rejected.status == 400
    assert "properties.recurrence.schedule.hours[2]" in rejected.body["error"]["message"]
    no_version = call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", job, query={})
    assert no_version.status == 400 and no_version.body["error"]["code"] == "MissingOrInvalidRequiredQueryParameter"
    assert call(runtime, "Jobs_Get", "GET", "j1").status == 404


def test_one_shot_job_fires_once_and_records_history(runtime: Runtime, http_target) -> None:
    make_collection(runtime)
    due = (datetime.now(UTC) + timedelta(seconds=3)).replace(microsecond=0)
    created = call(
        runtime,
        "Jobs_CreateOrUpdate",
        "PUT",
        "ping",
        {
            "properties": {
                "startTime": due.isoformat(),
                "action": {
                    "type": "Http",
                    "request": {
                        "uri": f"{http_target.url}/hook",
                        "method": "POST",
                        "body": "hi",
                        "headers": {"x-custom": "1"},
                    },
                },
            }
        },
    )
    assert created.status == 201, created.body
    assert created.body["name"] == "jc1/ping"
    assert created.body["properties"]["status"]["nextExecutionTime"] == due.strftime("%Y-%m-%dT%H:%M:%SZ")
    drain(runtime, 6)
    received = http_target.wait_for(1, 1)
    assert len(received) == 1
    hit = received[0]
    assert abs((hit.at - due).total_seconds()) < 2
    assert hit.method == "POST" and hit.body == b"hi" and hit.headers["x-custom"] == "1"
    assert hit.headers["x-ms-scheduler-jobid"] == "ping"
    assert hit.headers["x-ms-scheduler-jobcollectionid"] == "jc1"
    assert hit.headers["x-ms-scheduler-expected-execution-time"] == due.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert hit.headers["x-ms-scheduler-execution-region"] == "local"
    assert hit.headers["x-ms-scheduler-attempt"] == "1"
    assert hit.headers["x-ms-execution-tag"] and hit.headers["x-ms-client-request-id"]
    job = call(runtime, "Jobs_Get", "GET", "ping").body["properties"]
    assert job["state"] == "completed"
    assert job["status"]["executionCount"] == 1 and job["status"]["failureCount"] == 0
    history = call(runtime, "Jobs_ListJobHistory", "GET", "ping").body
    assert len(history["value"]) == 1
    entry = history["value"][0]["properties"]
    assert entry["status"] == "Completed" and entry["actionName"] == "MainAction"
    assert entry["retryCount"] == 0 and entry["repeatCount"] == 1
    assert entry["message"].startswith("Http Action - Response from host '127.0.0.1': 'OK'")
    assert history["nextLink"] is None


def test_duplicate_delivery_runs_once(runtime: Runtime, http_target) -> None:
    make_collection(runtime)
    call(
        runtime,
        "Jobs_CreateOrUpdate",
        "PUT",
        "dup",
        {"properties": {"action": {"type": "Http", "request": {"uri": http_target.url, "method": "GET"}}}},
    )
    messages = list(runtime.store.queue.client.receive_messages(visibility_timeout=60))
    assert len(messages) == 1
    runtime.executor.handle(messages[0].content)
    runtime.executor.handle(messages[0].content)  # the queue delivered it twice
    assert len(http_target.wait_for(2, 0.5)) == 1


def test_dispatcher_tick_enqueues_due_occurrences(settings, clock, http_target) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    start = clock.now().replace(second=0) + timedelta(minutes=5)
    created = call(
        rt,
        "Jobs_CreateOrUpdate",
        "PUT",
        "every-minute",
        {
            "properties": {
                "startTime": start.isoformat(),
                "recurrence": {"frequency": "Minute", "interval": 2, "count": 3},
                "action": {"type": "Http", "request": {"uri": http_target.url, "method": "GET"}},
            }
        },
    )
    assert created.status == 201
    dispatcher = Dispatcher(rt.store, clock)
    assert dispatcher.tick().enqueued == 0  # nothing due before the next tick
    clock.advance(timedelta(minutes=5) - timedelta(seconds=30))  # the tick that precedes the start
    assert dispatcher.tick().enqueued == 1
    job = rt.store.jobs.get(rt.store.jobs.all(CollectionKey(SUB, RG, JC))[0].key)
    assert job is not None and job.next_execution_time == start + timedelta(minutes=2)
    assert dispatcher.tick().enqueued == 0  # re-reading the same buckets finds nothing new
    clock.advance(timedelta(minutes=2))
    assert dispatcher.tick().enqueued == 1
    clock.advance(timedelta(minutes=2))
    assert dispatcher.tick().enqueued == 1
    job = rt.store.jobs.get(job.key)
    assert job is not None and job.next_execution_time is None  # count 3 reached
