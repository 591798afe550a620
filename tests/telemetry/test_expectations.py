"""Per-job silence: a job that carries "a success at least every D" and breaks it shows up, by its id, in the
metric after the next tick; it leaves it when it succeeds again; a deleted job's expectation is forgotten."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared.expectations import silent_for
from shared.keys import CollectionKey, JobKey
from shared.model import JobState
from shared.model.versions import PREVIEW, STABLE
from shared.runtime import Runtime
from shared.store import JobStore
from shared.store.expectations import Expectation
from tests.executor.support import JC, RG, SUB, call, http, make_collection, put_job
from tests.telemetry.conftest import Collected

COLLECTION = CollectionKey(SUB, RG, JC).resource_id
OLD, NEW = {"api-version": STABLE}, {"api-version": PREVIEW}
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


@pytest.mark.parametrize(
    ("last_success", "created", "state", "silent"),
    [
        (NOW - 2 * HOUR, NOW - 9 * HOUR, JobState.ENABLED, 2 * HOUR),  # succeeded, but too long ago
        (NOW - HOUR / 2, NOW - 9 * HOUR, JobState.ENABLED, None),  # succeeded recently enough
        (None, NOW - 2 * HOUR, JobState.DISABLED, 2 * HOUR),  # never succeeded: counted from its creation
        (None, NOW - HOUR / 2, JobState.ENABLED, None),  # new: not yet due for a success
        (NOW - 2 * HOUR, NOW - 9 * HOUR, JobState.FAULTED, 2 * HOUR),
        (NOW - 2 * HOUR, NOW - 9 * HOUR, JobState.COMPLETED, None),  # its schedule ended: nothing more expected
    ],
)
def test_an_expectation_is_broken_after_d_without_a_success(last_success, created, state, silent) -> None:
    expectation = Expectation(JobKey(SUB, RG, JC, "j"), HOUR, last_success, created, state)
    assert silent_for(expectation, NOW) == silent


def _expect(rt: Runtime, name: str, within: str | None, state: str | None = None) -> None:
    """Give a job an expectation through the API: the extension property of 2026-12-01-preview."""
    change: dict[str, object] = {"expectSuccessWithin": within} | ({"state": state} if state else {})
    answer = call(rt, "Jobs_Patch", "PATCH", name, {"properties": change}, query=NEW)
    assert answer.status == 200, answer.body


def _succeeded(rt: Runtime, name: str, at: datetime) -> None:
    """A success recorded as the executor records it (jobstate.after_attempt sets the last success)."""
    record = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
    assert record is not None
    rt.store.jobs.replace(replace(record, last_success_time=at))


def _silence(otel: Collected) -> dict[str, float]:
    return {p.attributes["scheduler.job.id"]: p.value for p in otel.points("scheduler.job.silence")}


def test_a_disabled_job_with_an_expectation_shows_up_in_the_metric_with_its_id(
    settings, clock, otel: Collected, storage
) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    later = (clock.now() + timedelta(days=1)).isoformat()
    for name in ("quiet", "busy", "plain"):
        put_job(rt, name, {"startTime": later, "action": http("http://127.0.0.1:9/")})
    assert call(rt, "Jobs_Patch", "PATCH", "quiet", {"properties": {"state": "Disabled"}}).status == 200
    _expect(rt, "quiet", "PT5M")
    _expect(rt, "busy", "PT5M")

    clock.advance(timedelta(minutes=8))
    _succeeded(rt, "busy", clock.now())
    clock.advance(timedelta(minutes=2))
    report = rt.dispatcher.fan_out()

    quiet = JobKey(SUB, RG, JC, "quiet").resource_id
    assert report.observation is not None and [b.job.job for b in report.observation.broken_expectations] == ["quiet"]
    (point,) = otel.points("scheduler.job.silence")
    assert point.attributes == {
        "scheduler.collection": COLLECTION,
        "scheduler.job.id": quiet,
        "scheduler.job.state": "disabled",
    }
    assert point.value == 600  # ten minutes without a success, five allowed
    assert [(p.attributes, p.value) for p in otel.points("scheduler.expectations.broken")] == [
        ({"scheduler.collection": COLLECTION}, 1)
    ]

    # It is enabled and succeeds again: the next tick says so (0), and "busy", silent since, takes its place.
    _expect(rt, "quiet", "PT5M", state="Enabled")
    _succeeded(rt, "quiet", clock.now())
    clock.advance(timedelta(minutes=4))
    rt.dispatcher.fan_out()
    busy = JobKey(SUB, RG, JC, "busy").resource_id
    assert _silence(otel) == {quiet: 0, busy: 360}


def test_a_deleted_jobs_expectation_is_forgotten_and_a_stale_mirror_is_confirmed_first(
    settings, clock, storage
) -> None:
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    later = (clock.now() + timedelta(days=1)).isoformat()
    for name in ("gone", "fresh"):
        put_job(rt, name, {"startTime": later, "action": http("http://127.0.0.1:9/")})
        _expect(rt, name, "PT1M")
    assert rt.store.expectations is not None
    assert sorted(e.job.job for e in rt.store.expectations.all()) == ["fresh", "gone"]
    assert call(rt, "Jobs_Delete", "DELETE", "gone").status == 200

    # The mirror of "fresh" misses a success (its mirror write was lost): the job itself is the truth.
    record = rt.store.jobs.get(JobKey(SUB, RG, JC, "fresh"))
    assert record is not None
    record = replace(record, last_success_time=clock.now() + timedelta(minutes=5))
    JobStore(rt.store.jobs.table, rt.store.jobs.keyring).replace(record)  # a job store that writes no mirror
    clock.advance(timedelta(minutes=5, seconds=30))

    report = rt.dispatcher.fan_out()
    assert report.observation is not None and report.observation.broken_expectations == []
    (mirrored,) = rt.store.expectations.all()
    assert mirrored.job.job == "fresh" and mirrored.last_success == record.last_success_time


def test_the_expectation_is_an_extension_of_2026_12_01_preview(settings, clock, storage) -> None:
    """Set with 2026-12-01-preview; 2016-03-01 neither shows it nor loses it in a read-modify-write."""
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    body = {
        "properties": {
            "startTime": (clock.now() + timedelta(days=1)).isoformat(),
            "action": http("http://127.0.0.1:9/"),
            "expectSuccessWithin": "01:00:00",
        }
    }
    put = call(rt, "Jobs_CreateOrUpdate", "PUT", "j", body, query=NEW)
    assert put.status == 201 and put.body["properties"]["expectSuccessWithin"] == "PT1H"
    old = call(rt, "Jobs_Get", "GET", "j", query=OLD).body
    assert "expectSuccessWithin" not in json.dumps(old)
    back = {"properties": {k: v for k, v in old["properties"].items() if k != "status"}}
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "j", back, query=OLD).status == 200
    assert call(rt, "Jobs_Get", "GET", "j", query=NEW).body["properties"]["expectSuccessWithin"] == "PT1H"
    record = rt.store.jobs.get(JobKey(SUB, RG, JC, "j"))
    assert record is not None and record.expect_success_within == HOUR

    for out_of_range in ("PT30S", "P600D"):
        refused = call(rt, "Jobs_Patch", "PATCH", "j", {"properties": {"expectSuccessWithin": out_of_range}}, query=NEW)
        assert refused.status == 400 and refused.body["error"]["message"] == (
            "properties.expectSuccessWithin: expectSuccessWithin must be from 1 minute to 18 months."
        ), refused.body
    _expect(rt, "j", None)  # removed
    assert "expectSuccessWithin" not in call(rt, "Jobs_Get", "GET", "j", query=NEW).body["properties"]
