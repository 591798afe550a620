"""The official azure-mgmt-scheduler client (7.x), unchanged, drives all 15 operations over real HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.mgmt.scheduler import models as m

from shared.model import JobExecutionStatus, JobHistoryActionName
from shared.records import HistoryRecord
from tests.support.scheduler_client import settle

RG = "rg-api"


def _collection(sku: str = "Standard") -> m.JobCollectionDefinition:
    return m.JobCollectionDefinition(
        location="westus",
        tags={"department": "marketing"},
        properties=m.JobCollectionProperties(
            sku=m.Sku(name=sku),
            state="Enabled",
            quota=m.JobCollectionQuota(
                max_job_count=20, max_recurrence=m.JobMaxRecurrence(frequency="Minute", interval=1)
            ),
        ),
    )


def _full_job(start: datetime) -> m.JobDefinition:
    """Every property a job can carry, secrets included."""
    return m.JobDefinition(
        properties=m.JobProperties(
            start_time=start,
            action=m.JobAction(
                type="Https",
                request=m.HttpRequest(
                    uri="https://example.com/hook?x=1",
                    method="POST",
                    body="some body message!",
                    headers={"content-type": "application/xml", "X-Custom": "v"},
                    authentication=m.BasicAuthentication(username="user", password="s3cret"),
                ),
                retry_policy=m.RetryPolicy(retry_type="Fixed", retry_interval=timedelta(seconds=45), retry_count=3),
                error_action=m.JobErrorAction(
                    type="StorageQueue",
                    queue_message=m.StorageQueueMessage(
                        storage_account="acct", queue_name="errors", sas_token="?sv=token", message="it failed"
                    ),
                    retry_policy=m.RetryPolicy(retry_type="Fixed", retry_interval=timedelta(days=1), retry_count=2),
                ),
            ),
            recurrence=m.JobRecurrence(
                frequency="Month",
                interval=1,
                count=10,
                end_time=start + timedelta(days=400),
                schedule=m.JobRecurrenceSchedule(
                    hours=[5, 17],
                    minutes=[30],
                    monthly_occurrences=[
                        m.JobRecurrenceScheduleMonthlyOccurrence(day="Friday", occurrence=-1),
                        m.JobRecurrenceScheduleMonthlyOccurrence(day="Monday", occurrence=1),
                    ],
                ),
            ),
            state="Enabled",
        )
    )


def test_collection_lifecycle(client) -> None:
    created = client.job_collections.create_or_update(RG, "jc-life", _collection())
    assert created.name == "jc-life" and created.location == "West US"
    assert created.type == "Microsoft.Scheduler/jobCollections"
    assert created.id.endswith(f"/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/jc-life")
    assert created.tags == {"department": "marketing"}
    assert created.properties.sku.name == "Standard" and created.properties.state == "Enabled"
    assert created.properties.quota.max_job_count == 20
    assert created.properties.quota.max_recurrence.frequency == "minute"

    got = client.job_collections.get(RG, "jc-life")
    assert got.as_dict() == created.as_dict()
    replaced = client.job_collections.create_or_update(RG, "jc-life", _collection("P10Premium"))
    assert replaced.properties.sku.name == "P10Premium"

    patched = client.job_collections.patch(RG, "jc-life", m.JobCollectionDefinition(tags={"team": "ops"}))
    assert patched.tags == {"team": "ops"} and patched.properties.sku.name == "P10Premium"
    assert patched.properties.quota.max_job_count == 20  # PATCH merges

    client.job_collections.create_or_update("rg-other", "jc-else", _collection())
    by_sub = {c.name for c in client.job_collections.list_by_subscription()}
    assert by_sub == {"jc-life", "jc-else"}
    assert [c.name for c in client.job_collections.list_by_resource_group(RG)] == ["jc-life"]

    client.job_collections.begin_delete(RG, "jc-life").result()
    with pytest.raises(ResourceNotFoundError):
        client.job_collections.get(RG, "jc-life")


def test_full_job_round_trips_losslessly(client) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    start = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    sent = _full_job(start)
    created = client.jobs.create_or_update(RG, "jc", "full", sent)
    got = client.jobs.get(RG, "jc", "full")
    assert got.name == "jc/full" and got.type == "Microsoft.Scheduler/jobCollections/jobs"
    assert got.id.endswith("/jobCollections/jc/jobs/full")

    expected = sent.as_dict()["properties"]
    expected["action"]["request"]["authentication"].pop("password")  # secrets are never returned
    expected["action"]["error_action"]["queue_message"].pop("sas_token")
    expected["state"] = "enabled"
    actual = got.as_dict()["properties"]
    status = actual.pop("status")
    assert _enums_lowered(actual) == _enums_lowered(expected)  # the service's own enum casing differs
    assert actual["recurrence"]["frequency"] == "month" and actual["action"]["retry_policy"]["retry_type"] == "fixed"
    assert created.as_dict()["properties"]["action"] == actual["action"]
    assert got.properties.action.retry_policy.retry_interval == timedelta(seconds=45)
    assert got.properties.action.error_action.retry_policy.retry_interval == timedelta(days=1)
    assert status["execution_count"] == 0 and got.properties.status.next_execution_time > start
    assert isinstance(got.properties.action.request.authentication, m.BasicAuthentication)


def test_job_operations(client, runtime) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    start = (datetime.now(UTC) + timedelta(hours=2)).replace(microsecond=0)
    for i in range(5):
        client.jobs.create_or_update(
            RG,
            "jc",
            f"job{i}",
            m.JobDefinition(
                properties=m.JobProperties(
                    start_time=start,
                    action=m.JobAction(type="Http", request=m.HttpRequest(uri="http://127.0.0.1:9/", method="GET")),
                    recurrence=m.JobRecurrence(frequency="Hour", interval=1),
                    state="Disabled" if i == 4 else "Enabled",
                )
            ),
        )

    page_sizes = [len(list(page)) for page in client.jobs.list(RG, "jc", top=2).by_page()]
    assert page_sizes == [2]  # $top caps the list: no nextLink for the client to follow
    assert len(list(client.jobs.list(RG, "jc", skip=3))) == 2
    enabled = [j.name for j in client.jobs.list(RG, "jc", filter="state eq 'Enabled'")]
    assert enabled == ["jc/job0", "jc/job1", "jc/job2", "jc/job3"]

    patched = client.jobs.patch(RG, "jc", "job0", m.JobDefinition(properties=m.JobProperties(state="Disabled")))
    assert patched.properties.state == "disabled"
    assert patched.properties.action.request.uri == "http://127.0.0.1:9/"

    client.jobs.run(RG, "jc", "job1")
    messages = runtime.store.queue.client.peek_messages(max_messages=32)
    assert any('"trigger":"run"' in msg.content for msg in messages)

    key = runtime.store.jobs.get(runtime.store.jobs.all(_ckey())[1].key).key
    for attempt, status in enumerate((JobExecutionStatus.FAILED, JobExecutionStatus.COMPLETED)):
        runtime.store.history.add(
            HistoryRecord(
                key=key,
                execution_id="e1",
                expected_execution_time=start,
                start_time=start,
                end_time=start,
                action_name=JobHistoryActionName.MAIN_ACTION,
                status=status,
                message="msg",
                retry_count=attempt,
                repeat_count=1,
            ),
            start,
        )
    history = list(client.jobs.list_job_history(RG, "jc", "job1"))
    assert [h.properties.status for h in history] == ["Completed", "Failed"]
    assert history[0].name.startswith("jc/job1/")
    failed = list(client.jobs.list_job_history(RG, "jc", "job1", filter="status eq Failed"))
    assert [h.properties.retry_count for h in failed] == [0]

    client.jobs.delete(RG, "jc", "job1")
    with pytest.raises(ResourceNotFoundError):
        client.jobs.get(RG, "jc", "job1")


def test_collection_disable_and_enable_cascade(client, runtime) -> None:
    client.job_collections.create_or_update(RG, "jc", _collection())
    start = (datetime.now(UTC) + timedelta(hours=2)).replace(microsecond=0)
    for name, state in (("a", "Enabled"), ("b", "Enabled"), ("c", "Disabled")):
        client.jobs.create_or_update(
            RG,
            "jc",
            name,
            m.JobDefinition(
                properties=m.JobProperties(
                    start_time=start,
                    state=state,
                    recurrence=m.JobRecurrence(frequency="Day", interval=1),
                    action=m.JobAction(type="Http", request=m.HttpRequest(uri="http://127.0.0.1:9/", method="GET")),
                )
            ),
        )

    client.job_collections.begin_disable(RG, "jc").result()
    assert client.job_collections.get(RG, "jc").properties.state == "Disabled"
    settle(runtime)  # the jobs follow after the answer: the dispatch trigger's work
    assert {j.properties.state for j in client.jobs.list(RG, "jc")} == {"disabled"}

    client.job_collections.begin_enable(RG, "jc").result()
    assert client.job_collections.get(RG, "jc").properties.state == "Enabled"
    settle(runtime)
    jobs = list(client.jobs.list(RG, "jc"))
    assert {j.properties.state for j in jobs} == {"enabled"}
    assert all(j.properties.status.next_execution_time == start for j in jobs)


def test_errors_reach_the_client_as_arm_errors(client) -> None:
    with pytest.raises(ResourceNotFoundError) as missing:
        client.jobs.get(RG, "nope", "nope")
    assert missing.value.error.code == "ResourceNotFound"
    client.job_collections.create_or_update(RG, "jc", _collection())
    bad = m.JobDefinition(
        properties=m.JobProperties(
            action=m.JobAction(type="Http", request=m.HttpRequest(uri="http://x/", method="GET")),
            recurrence=m.JobRecurrence(frequency="Day", schedule=m.JobRecurrenceSchedule(hours=[1, 2, 25])),
        )
    )
    with pytest.raises(HttpResponseError) as rejected:
        client.jobs.create_or_update(RG, "jc", "bad", bad)
    assert rejected.value.status_code == 400
    assert "properties.recurrence.schedule.hours[2]" in rejected.value.error.message


_ENUM_KEYS = {"frequency", "retry_type", "day", "state", "week_days"}


def _enums_lowered(value, key=""):
    if isinstance(value, dict):
        return {k: _enums_lowered(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_enums_lowered(v, key) for v in value]
    return value.lower() if isinstance(value, str) and key in _ENUM_KEYS else value


def _ckey():
    from shared.keys import CollectionKey

    return CollectionKey("sub-api", RG, "jc")
