"""Predictable spread (jobstate/spread.py) without storage: each job's occurrences fire at one fixed offset inside
its spreadWindow, derived from its identity; a herd of identical schedules lands evenly over the window; the
dispatcher's step queues the fire instant and measures lateness from it, while the occurrence keeps its nominal
identity; the preview and the job's status show the fire instant."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from shared import jobstate
from shared.keys import JobKey
from shared.model import JobProperties, JobState
from shared.records import JobRecord

NOW = datetime(2026, 3, 4, 10, 20, 30, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def job(name: str = "j", window: str | None = "PT1M", **recurrence: Any) -> JobRecord:
    properties = JobProperties.model_validate(
        {
            "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
            "startTime": "2026-03-01T00:00:00Z",
            "recurrence": recurrence or {"frequency": "Minute"},
            **({"spreadWindow": window} if window else {}),
        }
    )
    return jobstate.planned(
        JobRecord(JobKey("sub", "rg", "herd", name), properties, created_time=NOW, count_origin=NOW), NOW
    )


@given(
    st.text(min_size=1, max_size=40).filter(lambda s: "/" not in s),
    st.integers(min_value=1, max_value=3600),
)
def test_an_offset_is_whole_seconds_never_negative_and_inside_the_window(name: str, seconds: int) -> None:
    window = timedelta(seconds=seconds)
    offset = jobstate.spread_offset(JobKey("s", "g", "c", name), window)
    assert timedelta(0) <= offset < window or (seconds == 1 and offset == timedelta(0))
    assert offset.microseconds == 0
    assert jobstate.spread_offset(JobKey("s", "g", "c", name), window) == offset  # the same every time


def test_the_same_job_lands_at_the_same_offset_of_every_occurrence_whatever_the_case_of_its_name() -> None:
    key = JobKey("Sub", "RG", "Herd", "Nightly-Report")
    offset = jobstate.spread_offset(key, timedelta(minutes=5))
    assert jobstate.spread_offset(JobKey("sub", "rg", "herd", "nightly-report"), timedelta(minutes=5)) == offset
    occurrences = [NOW + n * timedelta(hours=1) for n in range(48)]
    assert {jobstate.fire_instant(key, o, timedelta(minutes=5)) - o for o in occurrences} == {offset}
    assert jobstate.spread_offset(key, None) == timedelta(0)


def test_a_herd_of_identical_schedules_spreads_evenly_over_the_window() -> None:
    window = timedelta(minutes=1)
    offsets = [jobstate.spread_offset(JobKey("sub", "rg", "herd", f"job-{n:04d}"), window) for n in range(1000)]
    per_second = Counter(int(o.total_seconds()) for o in offsets)
    assert set(per_second) == set(range(60))  # every second of the window is used
    assert max(per_second.values()) <= 30  # no second holds more than 3 % (the mean is 1.7 %)
    assert min(per_second.values()) >= 5


def test_the_step_queues_the_fire_instant_and_keeps_the_nominal_identity() -> None:
    record = job(window="PT1M")
    offset = jobstate.offset_of(record)
    assert offset > timedelta(0)
    due = record.next_execution_time
    assert due is not None
    step = jobstate.dispatch_step(record, due, due - MINUTE)  # the dispatcher works a minute ahead
    assert step.queued == (due,)  # the occurrence: its nominal time (execution id, occurrenceTime)
    assert step.due_of(due, due - MINUTE) == due + offset  # the message: its fire instant
    assert jobstate.advanced(record, step).next_execution_time == due + MINUTE


def test_lateness_counts_from_the_fire_instant() -> None:
    hourly = job(window="PT1H", frequency="Hour")
    offset = jobstate.offset_of(hourly)
    assert offset > timedelta(minutes=5)  # this job's offset (a fixed hash) leaves room for the check below
    due = hourly.next_execution_time
    assert due is not None
    # Four minutes after the nominal time, but before the fire instant: not missed, it fires at its instant.
    on_time = jobstate.dispatch_step(hourly, due, due + timedelta(minutes=4))
    assert on_time.catch_up is None and on_time.due_of(due, due + timedelta(minutes=4)) == due + offset
    # Found three minutes after its fire instant: missed (Latest runs it at once, its due already past).
    late = due + offset + timedelta(minutes=3)
    missed = jobstate.dispatch_step(hourly, due, late)
    assert missed.catch_up is not None and missed.queued == (due,)
    assert missed.due_of(due, late) < late


def test_preview_and_status_show_the_fire_instant() -> None:
    record = job("preview-me", window="PT1M", frequency="Minute", interval=5)
    offset = jobstate.offset_of(record)
    preview, _ = jobstate.upcoming(record, NOW, 3)
    assert [u.fires - u.occurrence for u in preview] == [offset] * 3
    assert preview[0].occurrence == record.next_execution_time
    status = jobstate.status(record, NOW)
    assert status is not None and status.next_execution_time == preview[0].fires
    plain = replace(record, properties=record.properties.model_copy(update={"spread_window": None}))
    assert jobstate.status(plain, NOW).next_execution_time == preview[0].occurrence  # type: ignore[union-attr]


def test_an_enabled_job_without_a_window_is_unchanged() -> None:
    record = job(window=None)
    assert jobstate.offset_of(record) == timedelta(0)
    due = record.next_execution_time
    assert due is not None
    assert jobstate.dispatch_step(record, due, NOW).due_of(due, NOW) == due
    assert record.state == JobState.ENABLED
