"""A stored entity that cannot be read never takes a list down (shared/store/readable.py).

The entities are damaged in the real Azurite table the way the issue found them (a duration an older
version wrote as `PT1e-05S`), or worse; the list answers with the readable ones and logs the bad one,
a GET of the bad one is a clear ARM error, and DELETE still removes it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from shared.keys import JobKey
from shared.model import JobExecutionStatus, JobHistoryActionName
from shared.records import HistoryRecord
from tests.support.scheduler_client import settle

V = {"api-version": "2016-03-01"}


def _job_body(ttl: str = "PT1M") -> dict:
    return {
        "properties": {
            "startTime": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
            "recurrence": {"frequency": "Day"},
            "action": {
                "type": "ServiceBusQueue",
                "serviceBusQueueMessage": {
                    "namespace": "ns",
                    "queueName": "q",
                    "message": "m",
                    "authentication": {"sasKeyName": "send", "sasKey": "k", "type": "SharedAccessKey"},
                    "brokeredMessageProperties": {"timeToLive": ttl},
                },
            },
        }
    }


def _damage(table, partition: str, row: str, **changes: object) -> None:
    entity = table.get(partition, row)
    entity.update(changes)
    table.upsert(entity)


def _job_row(runtime, name: str) -> tuple[str, str]:
    rows = [e for e in runtime.store.jobs.table.query("Name eq @n", {"n": name})]
    assert len(rows) == 1
    return rows[0]["PartitionKey"], rows[0]["RowKey"]


def test_a_job_written_with_an_unparseable_duration_leaves_the_list_answering(inproc, runtime, caplog) -> None:
    inproc.put_collection()
    for name in ("a", "bad", "c"):
        inproc.put_job("jc", name, _job_body())
    partition, row = _job_row(runtime, "bad")
    document = json.loads(runtime.store.jobs.table.get(partition, row)["Document"])
    document["action"]["serviceBusQueueMessage"]["brokeredMessageProperties"]["timeToLive"] = "PT1e-05S"
    _damage(runtime.store.jobs.table, partition, row, Document=json.dumps(document))

    with caplog.at_level("ERROR"):
        listed = inproc.call("Jobs_List", "GET", "jc", suffix="/jobs")
    assert listed.status == 200
    assert [j["name"] for j in listed.body["value"]] == ["jc/a", "jc/c"]
    assert [r for r in caplog.records if "cannot be read" in r.getMessage() and "left out" in r.getMessage()]

    got = inproc.get_job("jc", "bad")
    assert got.status == 409 and got.body["error"]["code"] == "StoredResourceUnreadable"
    assert "delete it" in got.body["error"]["message"] and "Traceback" not in json.dumps(got.body)
    assert inproc.call("Jobs_ListJobHistory", "GET", "jc", "bad", suffix="/history").status == 409

    assert inproc.call("Jobs_Delete", "DELETE", "jc", "bad").status == 200
    assert inproc.get_job("jc", "bad").status == 404
    assert [j["name"] for j in inproc.call("Jobs_List", "GET", "jc", suffix="/jobs").body["value"]] == ["jc/a", "jc/c"]


@pytest.mark.parametrize("damage", [{"Document": "{not json"}, {"State": "Sleeping"}, {"Document": "[]"}])
def test_any_unreadable_job_is_left_out_and_reported(inproc, runtime, caplog, damage) -> None:
    inproc.put_collection()
    inproc.put_job("jc", "good", _job_body())
    inproc.put_job("jc", "broken", _job_body())
    _damage(runtime.store.jobs.table, *_job_row(runtime, "broken"), **damage)
    with caplog.at_level("ERROR"):
        listed = inproc.call("Jobs_List", "GET", "jc", suffix="/jobs", query={**V, "$top": "10"})
    assert listed.status == 200 and [j["name"] for j in listed.body["value"]] == ["jc/good"]
    assert [r for r in caplog.records if "left out of the list" in r.getMessage()]
    assert inproc.get_job("jc", "broken").status == 409


def test_an_unreadable_history_entry_or_collection_is_left_out(inproc, runtime) -> None:
    inproc.put_collection("jc")
    inproc.put_collection("jc2")
    inproc.put_job("jc", "j", _job_body())
    key = JobKey(inproc.SUB, inproc.RG, "jc", "j")
    at = datetime.now(UTC).replace(microsecond=0)
    for n in range(3):
        runtime.store.history.add(
            HistoryRecord(
                key=key,
                execution_id=f"e{n}",
                expected_execution_time=at - timedelta(minutes=n),
                start_time=at,
                end_time=at,
                action_name=JobHistoryActionName.MAIN_ACTION,
                status=JobExecutionStatus.COMPLETED,
                message="ok",
                repeat_count=n + 1,
            ),
            at - timedelta(minutes=n),
        )
    entries = list(runtime.store.history.table.query("PartitionKey ge @lo", {"lo": ""}))
    _damage(runtime.store.history.table, entries[1]["PartitionKey"], entries[1]["RowKey"], ActionName="Sideways")
    history = inproc.call("Jobs_ListJobHistory", "GET", "jc", "j", suffix="/history")
    assert history.status == 200 and len(history.body["value"]) == 2

    rows = list(runtime.store.collections.table.query("Name eq @n", {"n": "jc2"}))
    _damage(runtime.store.collections.table, rows[0]["PartitionKey"], rows[0]["RowKey"], Document="{")
    listed = inproc.call("JobCollections_ListBySubscription", "GET")
    assert listed.status == 200 and [c["name"] for c in listed.body["value"]] == ["jc"]
    got = inproc.call("JobCollections_Get", "GET", "jc2")
    assert got.status == 409 and got.body["error"]["code"] == "StoredResourceUnreadable"


def test_the_housekeeping_scan_skips_an_unreadable_job(inproc, runtime, caplog) -> None:
    inproc.put_collection()
    inproc.put_job("jc", "fine", _job_body())
    inproc.put_job("jc", "odd", _job_body())
    _damage(runtime.store.jobs.table, *_job_row(runtime, "odd"), State="Sleeping")
    with caplog.at_level("ERROR"):
        names = [s.key.job for s in runtime.store.jobs.summaries()]
    assert names == ["fine"] and [r for r in caplog.records if "left out" in r.getMessage()]


def test_a_collection_with_an_unreadable_job_is_deleted_completely(inproc, runtime) -> None:
    inproc.put_collection()
    for name in ("one", "two", "three"):
        inproc.put_job("jc", name, _job_body())
    partition, row = _job_row(runtime, "two")
    _damage(runtime.store.jobs.table, partition, row, Document="{")
    assert inproc.call("JobCollections_Delete", "DELETE", "jc").status == 200
    assert inproc.call("JobCollections_Get", "GET", "jc").status == 404
    settle(runtime)  # the purge, queued by the delete
    assert list(runtime.store.jobs.table.query("PartitionKey eq @pk", {"pk": partition})) == []
