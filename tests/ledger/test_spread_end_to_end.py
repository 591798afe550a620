"""A job with a spreadWindow through the real API, dispatcher queue and executor on real Azurite, against a real
local HTTP target: it fires at its fixed offset after its nominal time, never before, while its identity (the
expected-execution-time header, the ledger's occurrenceTime, its execution tag) stays the nominal time; the
preview said that instant beforehand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared import jobstate
from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, format_utc
from shared.occurrence import Trigger, execution_id
from shared.runtime import Runtime
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_spread_job_fires_at_its_offset_and_keeps_its_nominal_identity(settings, http_target) -> None:
    rt = Runtime.create(settings)
    make_collection(rt)
    key = JobKey(SUB, RG, JC, "spread-job")
    window = timedelta(seconds=10)
    offset = jobstate.spread_offset(key, window)
    assert offset == timedelta(seconds=7)  # this job's fixed offset: well apart from its nominal time
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=5)  # still ahead when the PUT lands
    made = call(
        rt,
        "Jobs_CreateOrUpdate",
        "PUT",
        "spread-job",
        {
            "properties": {
                "startTime": format_utc(start),
                "spreadWindow": "PT10S",
                "action": {"type": "Http", "request": {"uri": f"{http_target.url}/spread", "method": "POST"}},
            }
        },
        query=NEWER,
    )
    assert made.status == 201, made.body
    assert made.body["properties"]["status"]["nextExecutionTime"] == format_utc(start + offset)
    preview = call(rt, "Jobs_ListOccurrences", "GET", "spread-job", query=NEWER).body["value"]
    assert [(o["occurrenceTime"], o["fireTime"]) for o in preview] == [(format_utc(start), format_utc(start + offset))]

    drain(rt, 60, until=lambda: bool(http_target.requests))
    hit = http_target.requests[0]
    assert hit.at >= start + offset - timedelta(seconds=0.2)  # never early (the clocks are the same machine's)
    assert hit.headers["x-ms-scheduler-expected-execution-time"] == format_utc(start)
    assert hit.headers["idempotency-key"] == execution_id(key, start, Trigger.SCHEDULE)
    drain(rt, 30, until=lambda: bool(call(rt, "Jobs_ListJobHistory", "GET", "spread-job", query=NEWER).body["value"]))
    entry = call(rt, "Jobs_ListJobHistory", "GET", "spread-job", query=NEWER).body["value"][0]["properties"]
    assert (entry["occurrenceTime"], entry["status"]) == (format_utc(start), "Completed")
    attempt = call(rt, "Jobs_ListJobHistory", "GET", "spread-job").body["value"][0]["properties"]  # 2016-03-01
    assert _instant(attempt["expectedExecutionTime"]) == start + offset  # the attempt's due: its fire instant
