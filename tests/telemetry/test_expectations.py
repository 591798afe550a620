"""Per-job silence: a job that carries "a success at least every D" and breaks it shows up, by its id, in the
metric after the next tick; it leaves it when it succeeds again; a deleted job's expectation is forgotten."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared.expectations import silent_for
from shared.keys import CollectionKey, JobKey
from shared.model import JobState
from shared.runtime import Runtime
from shared.store import JobStore
from shared.store.expectations import Expectation
from tests.executor.support import JC, RG, SUB, call, http, make_collection, put_job
from tests.telemetry.conftest import Collected

COLLECTION = CollectionKey(SUB, RG, JC).resource_id
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


@pytest.mark.parametrize(("last_success", "created", "state", "silent"), [
    (NOW - 2 * HOUR, NOW - 9 * HOUR, JobState.ENABLED, 2 * HOUR),  # succeeded, but too long ago
    (NOW - HOUR / 2, NOW - 9 * HOUR, JobState.ENABLED, None),  # succeeded recently enough
    (None, NOW - 2 * HOUR, JobState.DISABLED, 2 * HOUR),  # never succeeded: counted from its creation
    (None, NOW - HOUR / 2, JobState.ENABLED, None),  # new: not yet due for a success
    (NOW - 2 * HOUR, NOW - 9 * HOUR, JobState.FAULTED, 2 * HOUR),
    (NOW - 2 * HOUR, NOW - 9 * HOUR, JobState.COMPLETED, None),  # its schedule ended: nothing more expected
])
def test_an_expectation_is_broken_after_d_without_a_success(last_success, created, state, silent) -> None:
    expectation = Expectation(JobKey(SUB, RG, JC, "j"), HOUR, last_success, created, state)
    assert silent_for(expectation, NOW) == silent


def _expect(rt: Runtime, name: str, within: timedelta, **changes: object) -> None:
    """Give a stored job an expectation (what the newer api-version's extension will set through the API)."""
    record = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
    assert record is not None
    rt.store.jobs.replace(replace(record, expect_success_within=within, **changes))


def _silence(otel: Collected) -> dict[str, float]:
    return {p.attributes["scheduler.job.id"]: p.value for p in otel.points("scheduler.job.silence")}


def test_a_disabled_job_with_an_expectation_shows_up_in_the_metric_with_its_id(settings, clock,
                                                                              otel: Collected) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    later = (clock.now() + timedelta(days=1)).isoformat()
    for name in ("quiet", "busy", "plain"):
        put_job(rt, name, {"startTime": later, "action": http("http://127.0.0.1:9/")})
    assert call(rt, "Jobs_Patch", "PATCH", "quiet", {"properties": {"state": "Disabled"}}).status == 200
    _expect(rt, "quiet", timedelta(minutes=5))
    _expect(rt, "busy", timedelta(minutes=5))

    clock.advance(timedelta(minutes=8))
    _expect(rt, "busy", timedelta(minutes=5), last_success_time=clock.now())  # as the executor records a success
    clock.advance(timedelta(minutes=2))
    report = rt.dispatcher.fan_out()

    quiet = JobKey(SUB, RG, JC, "quiet").resource_id
    assert report.observation is not None and [b.job.job for b in report.observation.broken_expectations] == ["quiet"]
    (point,) = otel.points("scheduler.job.silence")
    assert point.attributes == {"scheduler.collection": COLLECTION, "scheduler.job.id": quiet,
                                "scheduler.job.state": "disabled"}
    assert point.value == 600  # ten minutes without a success, five allowed
    assert [(p.attributes, p.value) for p in otel.points("scheduler.expectations.broken")] == [
        ({"scheduler.collection": COLLECTION}, 1)]

    # It is enabled and succeeds again: the next tick says so (0), and "busy", silent since, takes its place.
    _expect(rt, "quiet", timedelta(minutes=5), last_success_time=clock.now(), state=JobState.ENABLED)
    clock.advance(timedelta(minutes=4))
    rt.dispatcher.fan_out()
    busy = JobKey(SUB, RG, JC, "busy").resource_id
    assert _silence(otel) == {quiet: 0, busy: 360}


def test_a_deleted_jobs_expectation_is_forgotten_and_a_stale_mirror_is_confirmed_first(settings, clock) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    later = (clock.now() + timedelta(days=1)).isoformat()
    for name in ("gone", "fresh"):
        put_job(rt, name, {"startTime": later, "action": http("http://127.0.0.1:9/")})
        _expect(rt, name, timedelta(minutes=1))
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
