"""Answers as the real service gave them in its recorded exchanges (docs/wire-contract.md §2.12), through the
official client where it can express the call, plain HTTP (the in-process API) where it cannot.

One test per difference found by replaying the recordings: Service Bus enum casing, the `interval: 1`
default, `$top`/`$skip` as cap and offset, the pending run of a one-shot job, no `status` on a Disabled
job, 201 for a replacing collection PUT, durations that round-trip exactly; and from the second round
(docs/wire-contract.md §7): the service's own 404 for a missing job, and `quota.maxJobOccurrence` accepted but
never returned. The other two of that round have modules of their own: test_implicit_start_time.py (no
startTime a job was not given) and test_tick_instants.py (7 fractional digits echoed).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from azure.core.exceptions import ResourceNotFoundError
from azure.mgmt.scheduler import models as m

from shared.keys import JobKey
from shared.model import JobExecutionStatus, JobHistoryActionName
from shared.records import HistoryRecord

RG = "rg-api"


def raw(pipeline_response: Any, deserialized: Any, headers: Any) -> Any:
    """`cls=raw`: the answer's JSON exactly as it came over the wire, instead of the SDK's model."""
    return json.loads(pipeline_response.http_response.text())


def status_code(pipeline_response: Any, deserialized: Any, headers: Any) -> int:
    return pipeline_response.http_response.status_code


def _collection() -> m.JobCollectionDefinition:
    return m.JobCollectionDefinition(
        location="westus", properties=m.JobCollectionProperties(sku=m.Sku(name="Standard"))
    )


def _http_job(
    start: datetime | None = None,
    recurrence: m.JobRecurrence | None = None,
    state: str = "Enabled",
    uri: str = "http://127.0.0.1:9/",
) -> m.JobDefinition:
    return m.JobDefinition(
        properties=m.JobProperties(
            start_time=start,
            action=m.JobAction(type="Http", request=m.HttpRequest(uri=uri, method="GET")),
            recurrence=recurrence,
            state=state,
        )
    )


def _service_bus_job(ttl: timedelta) -> m.JobDefinition:
    return m.JobDefinition(
        properties=m.JobProperties(
            start_time=datetime.now(UTC) + timedelta(days=1),
            action=m.JobAction(
                type="ServiceBusQueue",
                service_bus_queue_message=m.ServiceBusQueueMessage(
                    namespace="ns",
                    queue_name="q1",
                    message="hi",
                    transport_type="NetMessaging",
                    authentication=m.ServiceBusAuthentication(
                        sas_key="k3y", sas_key_name="send", type="SharedAccessKey"
                    ),
                    brokered_message_properties=m.ServiceBusBrokeredMessageProperties(time_to_live=ttl),
                ),
            ),
            recurrence=m.JobRecurrence(frequency="Day", interval=1),
        )
    )


def test_service_bus_enums_are_camel_cased_as_recorded(client) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    client.jobs.create_or_update(RG, "jc", "sb", _service_bus_job(timedelta(hours=1)))
    wire = client.jobs.get(RG, "jc", "sb", cls=raw)["properties"]["action"]["serviceBusQueueMessage"]
    assert wire["transportType"] == "netMessaging"
    assert wire["authentication"] == {"sasKeyName": "send", "type": "sharedAccessKey"}  # sasKey is write-only
    got = client.jobs.get(RG, "jc", "sb").properties.action.service_bus_queue_message
    assert got.transport_type.lower() == "netmessaging" and got.authentication.type.lower() == "sharedaccesskey"


def test_amqp_and_not_specified_follow_the_same_camel_case_rule(inproc) -> None:
    inproc.put_collection()
    body = {
        "properties": {
            "action": {
                "type": "ServiceBusTopic",
                "serviceBusTopicMessage": {
                    "namespace": "ns",
                    "topicPath": "t",
                    "transportType": "AMQP",
                    "authentication": {"sasKeyName": "send", "sasKey": "k", "type": "NotSpecified"},
                },
            }
        }
    }
    message = inproc.put_job("jc", "topic", body).body["properties"]["action"]["serviceBusTopicMessage"]
    assert message["transportType"] == "amqp" and message["authentication"]["type"] == "notSpecified"


def test_absent_interval_is_answered_as_one(client) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    start = datetime.now(UTC) + timedelta(hours=1)
    created = client.jobs.create_or_update(RG, "jc", "j", _http_job(start, m.JobRecurrence(frequency="Hour")), cls=raw)
    assert created["properties"]["recurrence"] == {"frequency": "hour", "interval": 1}
    assert client.jobs.get(RG, "jc", "j").properties.recurrence.interval == 1
    listed = client.jobs.list(RG, "jc", cls=lambda items: [i.properties.recurrence.interval for i in items])
    assert list(listed) == [1]


def test_top_caps_history_and_skip_offsets_it(client, runtime, inproc) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    start = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    client.jobs.create_or_update(RG, "jc", "busy", _http_job(start, m.JobRecurrence(frequency="Hour")))
    key = JobKey("sub-api", RG, "jc", "busy")
    for n in range(135):  # the recording's count
        at = start - timedelta(hours=n)
        runtime.store.history.add(
            HistoryRecord(
                key=key,
                execution_id=f"e{n}",
                expected_execution_time=at,
                start_time=at,
                end_time=at,
                action_name=JobHistoryActionName.MAIN_ACTION,
                status=JobExecutionStatus.COMPLETED,
                message="ok",
                repeat_count=135 - n,
            ),
            at,
        )
    entries = list(client.jobs.list_job_history(RG, "jc", "busy", top=5))
    assert len(entries) == 5  # the SDK follows nextLink: a page size would have given it all 135
    assert [e.properties.repeat_count for e in entries] == [135, 134, 133, 132, 131]
    answer = inproc.call(
        "Jobs_ListJobHistory", "GET", "jc", "busy", suffix="/history", query={"api-version": "2016-03-01", "$top": "5"}
    )
    assert len(answer.body["value"]) == 5 and answer.body["nextLink"] is None  # as recorded
    skipped = list(client.jobs.list_job_history(RG, "jc", "busy", top=10, skip=130))
    assert [e.properties.repeat_count for e in skipped] == [5, 4, 3, 2, 1]
    assert len(list(client.jobs.list_job_history(RG, "jc", "busy"))) == 135  # no $top: paged with nextLink


def test_top_caps_the_jobs_list_and_the_answer_has_a_null_next_link(client, inproc) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    start = datetime.now(UTC) + timedelta(hours=3)
    for i in range(7):
        client.jobs.create_or_update(RG, "jc", f"job{i}", _http_job(start, m.JobRecurrence(frequency="Hour")))
    assert [j.name for j in client.jobs.list(RG, "jc", top=3, skip=2)] == ["jc/job2", "jc/job3", "jc/job4"]
    answer = inproc.call("Jobs_List", "GET", "jc", suffix="/jobs", query={"api-version": "2016-03-01", "$top": "2"})
    assert answer.status == 200 and len(answer.body["value"]) == 2 and answer.body["nextLink"] is None


def test_past_one_shot_job_shows_its_pending_run_until_it_ran(client, runtime, http_target) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    before = datetime.now(UTC).replace(microsecond=0)
    created = client.jobs.create_or_update(
        RG, "jc", "once", _http_job(before - timedelta(hours=1), uri=http_target.url)
    )
    pending = created.properties.status.next_execution_time
    assert pending is not None and before <= pending <= datetime.now(UTC)
    assert client.jobs.get(RG, "jc", "once").properties.status.next_execution_time == pending
    listed = [j.properties.status.next_execution_time for j in client.jobs.list(RG, "jc")]
    assert listed == [pending]

    for message in runtime.store.queue.client.receive_messages(visibility_timeout=60):
        runtime.executor.handle(message.content)  # what the queue trigger does
    ran = client.jobs.get(RG, "jc", "once")
    assert len(http_target.requests) == 1
    assert ran.properties.state == "completed" and ran.properties.status.next_execution_time is None
    assert ran.properties.status.execution_count == 1


def test_disabled_job_has_no_status_in_get_and_list(client) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    start = datetime.now(UTC) + timedelta(hours=1)
    client.jobs.create_or_update(RG, "jc", "off", _http_job(start, m.JobRecurrence(frequency="Hour"), "Disabled"))
    client.jobs.create_or_update(RG, "jc", "on", _http_job(start, m.JobRecurrence(frequency="Hour")))
    assert "status" not in client.jobs.get(RG, "jc", "off", cls=raw)["properties"]
    statuses = {j.name: j.properties.status for j in client.jobs.list(RG, "jc")}
    assert statuses["jc/off"] is None and statuses["jc/on"].execution_count == 0
    disabled = client.jobs.list(RG, "jc", filter="state eq 'Disabled'")
    assert [j.properties.status for j in disabled] == [None]


def test_collection_put_answers_201_when_it_replaces_too(client) -> None:
    assert client.job_collections.create_or_update(RG, "jc", _collection(), cls=status_code) == 201
    assert client.job_collections.create_or_update(RG, "jc", _collection(), cls=status_code) == 201
    client.jobs.create_or_update(RG, "jc", "j", _http_job(datetime.now(UTC) + timedelta(hours=1)))
    # A job PUT that replaces a job answered 200 in the recordings, and still does.
    replaced = client.jobs.create_or_update(
        RG, "jc", "j", _http_job(datetime.now(UTC) + timedelta(hours=2)), cls=status_code
    )
    assert replaced == 200


def test_durations_round_trip_exactly_through_the_store(client, inproc) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    client.jobs.create_or_update(RG, "jc", "tiny", _service_bus_job(timedelta(microseconds=10)))
    wire = client.jobs.get(RG, "jc", "tiny", cls=raw)["properties"]["action"]["serviceBusQueueMessage"]
    assert wire["brokeredMessageProperties"]["timeToLive"] == "PT0.00001S"  # was PT1e-05S, then 500 forever
    assert client.jobs.get(
        RG, "jc", "tiny"
    ).properties.action.service_bus_queue_message.brokered_message_properties.time_to_live == timedelta(microseconds=10)
    assert [j.name for j in client.jobs.list(RG, "jc")] == ["jc/tiny"]

    for sent, answered in (
        ("PT59.1234567S", "PT59.1234567S"),
        ("00:00:59.1234567", "PT59.1234567S"),
        ("1.02:03:04.5", "P1DT2H3M4.5S"),
        ("P2W", "P14D"),
    ):
        body = inproc.http_job(startTime=(datetime.now(UTC) + timedelta(days=1)).isoformat())
        body["properties"]["action"]["retryPolicy"] = {"retryType": "Fixed", "retryInterval": sent, "retryCount": 1}
        put = inproc.put_job("jc", "retry", body, expect=None)
        assert put.status in (200, 201), put.body
        assert put.body["properties"]["action"]["retryPolicy"]["retryInterval"] == answered
        got = inproc.get_job("jc", "retry").body["properties"]["action"]["retryPolicy"]["retryInterval"]
        assert got == answered
    too_fine = inproc.http_job()
    too_fine["properties"]["action"]["retryPolicy"] = {"retryType": "Fixed", "retryInterval": "PT20.00000001S"}
    rejected = inproc.put_job("jc", "fine", too_fine, expect=400)
    assert "retryInterval" in rejected.body["error"]["message"]


# Each job operation on a job the collection does not hold, as (operation, method, route suffix, body).
_JOB_OPERATIONS = (
    ("Jobs_Get", "GET", "", None),
    ("Jobs_Patch", "PATCH", "", {"properties": {"state": "Disabled"}}),
    ("Jobs_Delete", "DELETE", "", None),
    ("Jobs_Run", "POST", "/run", None),
    ("Jobs_ListJobHistory", "GET", "/history", None),
)


@pytest.mark.parametrize(("operation", "method", "suffix", "body"), _JOB_OPERATIONS)
def test_a_missing_job_is_answered_as_the_service_did(inproc, operation, method, suffix, body) -> None:
    inproc.put_collection("jc")
    answer = inproc.call(operation, method, "jc", "nope", body=body, suffix=suffix)
    assert answer.status == 404
    assert answer.body == {"error": {"code": "NotFound", "message": "Job 'nope' cannot be found."}}  # as recorded


@pytest.mark.parametrize(("operation", "method", "suffix", "body"), _JOB_OPERATIONS)
def test_a_job_of_a_missing_collection_is_a_missing_resource(inproc, operation, method, suffix, body) -> None:
    answer = inproc.call(operation, method, "gone", "nope", body=body, suffix=suffix)
    assert answer.status == 404 and answer.body["error"]["code"] == "ResourceNotFound"


def test_the_official_client_sees_a_missing_job_as_not_found(client) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    with pytest.raises(ResourceNotFoundError) as missing:
        client.jobs.get(RG, "jc", "HttpJobWithStartTime")
    assert missing.value.error.code == "NotFound"
    assert missing.value.error.message == "Job 'HttpJobWithStartTime' cannot be found."


def test_max_job_occurrence_is_accepted_and_never_returned(client, inproc) -> None:
    quota = {"maxJobCount": 20, "maxJobOccurrence": 5, "maxRecurrence": {"frequency": "Minute", "interval": 1}}
    put = inproc.put_collection("jc", quota=quota).body
    expected = {"maxJobCount": 20, "maxRecurrence": {"frequency": "minute", "interval": 1}}
    assert put["properties"]["quota"] == expected
    assert inproc.call("JobCollections_Get", "GET", "jc").body == put
    for operation in ("JobCollections_ListByResourceGroup", "JobCollections_ListBySubscription"):
        assert inproc.call(operation, "GET").body["value"] == [put]
    patched = inproc.call(
        "JobCollections_Patch", "PATCH", "jc", body={"properties": {"quota": {"maxJobOccurrence": 7}}}
    )
    assert patched.status == 200 and patched.body == put
    sdk = client.job_collections.get(RG, "jc").properties.quota
    assert sdk.max_job_count == 20 and sdk.max_job_occurrence is None
    refused = inproc.call(
        "JobCollections_CreateOrUpdate",
        "PUT",
        "jc",
        body={"location": "westus", "properties": {"quota": {"maxJobOccurrence": 2**31}}},
    )
    assert refused.status == 400 and "maxJobOccurrence" in refused.body["error"]["message"]
