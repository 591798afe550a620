"""History by api-version: 2016-03-01 keeps listing attempts exactly as before (no ledger row, no newer property,
no `Skipped`); the newer version lists the ledger with `$filter` on status and a time range; a collection's
`historyRetention` exists in the newer version only."""

from __future__ import annotations

from datetime import datetime, timedelta

from shared.dispatcher import Dispatcher
from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from tests.support.clock import ManualClock
from tests.support.scheduler_client import call, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
OLD_PROPERTIES = {
    "startTime",
    "endTime",
    "expectedExecutionTime",
    "actionName",
    "status",
    "message",
    "retryCount",
    "repeatCount",
}


def z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def skipped_hour(rt: Runtime, clock: ManualClock) -> datetime:
    """An every-minute job with the Skip policy whose dispatcher was held back an hour: 60 ledger entries."""
    start = clock.now().replace(second=0) + timedelta(minutes=3)
    assert (
        call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            "j",
            {
                "properties": {
                    "startTime": start.isoformat(),
                    "recurrence": {"frequency": "Minute"},
                    "missedRunPolicy": {"type": "Skip"},
                    "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
                }
            },
            query=NEWER,
        ).status
        == 201
    )
    clock.current = start + timedelta(minutes=59, seconds=30)
    Dispatcher(rt.store, clock).tick()
    return start


def test_2016_history_is_unchanged_and_the_newer_one_is_the_ledger(settings, clock: ManualClock) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    start = skipped_hour(rt, clock)
    old = call(rt, "Jobs_ListJobHistory", "GET", "j").body
    assert [h["properties"]["status"] for h in old["value"]] == ["Postponed"]  # the one note, as before
    assert set(old["value"][0]["properties"]) == OLD_PROPERTIES
    assert (
        call(
            rt, "Jobs_ListJobHistory", "GET", "j", query={"api-version": "2016-03-01", "$filter": "status eq 'Skipped'"}
        ).status
        == 400
    )
    newer = call(rt, "Jobs_ListJobHistory", "GET", "j", query=NEWER).body
    assert len(newer["value"]) == 60 and newer["nextLink"] is None
    first = newer["value"][0]["properties"]
    assert (first["status"], first["reason"], first["trigger"], first["occurrenceTime"]) == (
        "Skipped",
        "SkippedByPolicy",
        "Schedule",
        z(start + timedelta(minutes=59)),
    )
    assert first["expectedExecutionTime"] == first["occurrenceTime"] and first["executionTag"]


def test_the_ledger_filters_on_status_and_a_time_range(settings, clock: ManualClock) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    start = skipped_hour(rt, clock)

    def listed(expression: str) -> list[str]:
        answer = call(rt, "Jobs_ListJobHistory", "GET", "j", query={**NEWER, "$filter": expression})
        assert answer.status == 200, answer.body
        return [e["properties"]["occurrenceTime"] for e in answer.body["value"]]

    at = [z(start + timedelta(minutes=n)) for n in range(60)]
    assert listed(f"expectedExecutionTime ge {at[10]} and expectedExecutionTime lt {at[13]}") == at[10:13][::-1]
    assert listed(f"occurrenceTime gt '{at[57]}'") == at[58:][::-1]
    assert listed(f"occurrenceTime le datetime'{at[1]}' and status eq 'Skipped'") == at[:2][::-1]
    assert listed(f"occurrenceTime eq {at[5]}") == [at[5]]
    assert listed("status eq 'Completed'") == []
    for bad in ("state eq 'Enabled'", "occurrenceTime ge yesterday", "status eq 'Maybe'", "occurrenceTime ne x"):
        answer = call(rt, "Jobs_ListJobHistory", "GET", "j", query={**NEWER, "$filter": bad})
        assert answer.status == 400 and answer.body["error"]["code"] == "BadRequest", bad
    page = call(rt, "Jobs_ListJobHistory", "GET", "j", query={**NEWER, "$top": "5", "$skip": "2"}).body
    assert [e["properties"]["occurrenceTime"] for e in page["value"]] == at[::-1][2:7] and page["nextLink"] is None


def test_history_retention_is_a_newer_collection_property(settings, clock: ManualClock) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    retention = {"maxEntriesPerJob": 50, "maxAge": "P7D", "failureMaxAge": "P30D"}
    answer = call(
        rt, "JobCollections_Patch", "PATCH", body={"properties": {"historyRetention": retention}}, query=NEWER
    )
    assert answer.status == 200 and answer.body["properties"]["historyRetention"] == retention
    assert "historyRetention" not in call(rt, "JobCollections_Get", "GET").body["properties"]  # 2016-03-01
    assert call(rt, "JobCollections_Get", "GET", query=NEWER).body["properties"]["historyRetention"] == retention
    for bad in ({"maxEntriesPerJob": 0}, {"maxAge": "P61D"}, {"maxAge": "P7D", "failureMaxAge": "P1D"}):
        refused = call(rt, "JobCollections_Patch", "PATCH", body={"properties": {"historyRetention": bad}}, query=NEWER)
        assert refused.status == 400, bad
