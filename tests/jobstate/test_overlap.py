"""The overlap policy (jobstate/overlap.py) row by row and over a simulated timeline, without storage.

The timeline is the issue's: a job that takes 90 s runs every 60 s. Under `Skip` it runs at 0, 120, 240 and the
others are skipped; under `BufferOne` it runs back to back (each one as soon as the previous ends, at most one
waiting); under `Allow` the runs overlap. The simulation drives the very functions the executor calls at an
occurrence's first attempt (`begun`) and at its end (`ended`, whose released occurrence starts at once).
"""

from __future__ import annotations

import heapq
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared import jobstate
from shared.jobstate import Turn
from shared.keys import JobKey
from shared.model import JobProperties, OverlapPolicy
from shared.occurrence import Trigger, execution_id
from shared.records import JobRecord, OccurrenceRef
from shared.timings import Timings

T0 = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
KEY = JobKey("sub", "rg", "jc", "slow")
MINUTE = timedelta(minutes=1)
SECOND = timedelta(seconds=1)
LEASE = Timings().running_lease  # a running occurrence's marker, as the settings hold it by default


def job(policy: str | None) -> JobRecord:
    properties = JobProperties.model_validate(
        {
            "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
            "startTime": T0.isoformat(),
            "recurrence": {"frequency": "Minute"},
            **({"overlapPolicy": policy} if policy else {}),
        }
    )
    return JobRecord(KEY, properties, created_time=T0, count_origin=T0)


def ref(at: datetime, trigger: Trigger = Trigger.SCHEDULE, overlap: OverlapPolicy | None = None) -> OccurrenceRef:
    return OccurrenceRef(execution_id(KEY, at, trigger), at, trigger.value, 0, overlap)


@pytest.mark.parametrize(
    ("policy", "running", "waiting", "turn"),
    [
        (None, False, False, Turn.RUN),
        (None, True, True, Turn.RUN),
        (OverlapPolicy.ALLOW, True, False, Turn.RUN),
        (OverlapPolicy.ALLOW, True, True, Turn.RUN),
        (OverlapPolicy.SKIP, False, False, Turn.RUN),
        (OverlapPolicy.SKIP, True, False, Turn.SKIP),
        (OverlapPolicy.SKIP, True, True, Turn.SKIP),
        (OverlapPolicy.BUFFER_ONE, False, False, Turn.RUN),
        (OverlapPolicy.BUFFER_ONE, True, False, Turn.BUFFER),
        (OverlapPolicy.BUFFER_ONE, True, True, Turn.SKIP),
    ],
)
def test_the_decision_table(policy, running, waiting, turn) -> None:
    assert jobstate.on_occurrence(policy, running, waiting) == turn


def run_timeline(policy: str | None) -> dict[str, Any]:
    """Occurrences every 60 s from 0 to 300, each running 90 s: when each started, which were skipped, and the
    most that ran at once."""
    record = job(policy)
    queue: list[tuple[int, int, str, datetime]] = []
    for second in range(0, 301, 60):
        heapq.heappush(queue, (second, 1, "due", T0 + timedelta(seconds=second)))
    started: dict[int, int] = {}
    skipped: list[int] = []
    in_flight = most = 0
    while queue:
        second, _, kind, occurrence = heapq.heappop(queue)
        now = T0 + timedelta(seconds=second)
        if kind == "end":
            in_flight -= 1
            done = jobstate.ended(record, ref(occurrence).execution_id, now, jobstate.marker_until(now, LEASE))
            record = done.job or record
            if done.released is not None:  # its writer queues it at once: it starts now
                heapq.heappush(queue, (second, 1, "start", done.released.occurrence))
            continue
        if kind == "due":
            decision = jobstate.begun(record, ref(occurrence), now, jobstate.marker_until(now, LEASE))
            record = decision.job or record
            if decision.turn == Turn.SKIP:
                skipped.append(int((occurrence - T0).total_seconds()))
                continue
            if decision.turn == Turn.BUFFER:
                continue
        else:  # a released occurrence starts: it is the running one already, and its begun says so
            assert jobstate.begun(record, ref(occurrence), now, jobstate.marker_until(now, LEASE)).turn == Turn.RUN
        started[int((occurrence - T0).total_seconds())] = second
        in_flight += 1
        most = max(most, in_flight)
        heapq.heappush(queue, (second + 90, 0, "end", occurrence))
    return {"started": started, "skipped": skipped, "most": most, "job": record}


def test_skip_runs_at_0_120_240_and_skips_the_others() -> None:
    timeline = run_timeline("Skip")
    assert timeline["started"] == {0: 0, 120: 120, 240: 240}
    assert timeline["skipped"] == [60, 180, 300]
    assert timeline["most"] == 1


def test_buffer_one_runs_back_to_back_with_at_most_one_waiting() -> None:
    timeline = run_timeline("BufferOne")
    # Each starts when the previous ends (90 s later); one waits at a time, so the rest are skipped.
    assert timeline["started"] == {0: 0, 60: 90, 120: 180, 180: 270, 300: 360}
    assert timeline["skipped"] == [240]
    assert timeline["most"] == 1
    assert not timeline["job"].overlap  # the last one ended: nothing runs, nothing waits


def test_allow_overlaps() -> None:
    timeline = run_timeline(None)
    assert timeline["started"] == {s: s for s in range(0, 301, 60)}
    assert timeline["skipped"] == [] and timeline["most"] == 2
    assert not timeline["job"].overlap  # an Allow job keeps no marker


def test_a_redelivery_runs_on_and_a_lapsed_marker_frees_the_job() -> None:
    record = job("Skip")
    first = jobstate.begun(record, ref(T0), T0, T0 + timedelta(minutes=3))
    assert first.turn == Turn.RUN and first.job is not None
    record = first.job
    assert jobstate.begun(record, ref(T0), T0 + timedelta(seconds=5), T0).turn == Turn.RUN  # itself again
    later = T0 + timedelta(minutes=1)
    assert jobstate.begun(record, ref(later), later, later).turn == Turn.SKIP
    lapsed = T0 + timedelta(minutes=4)  # its runner vanished: the marker lapsed
    after = jobstate.begun(record, ref(lapsed), lapsed, lapsed + timedelta(minutes=3))
    assert after.turn == Turn.RUN and after.job is not None
    assert [r.ref.occurrence for r in after.job.overlap.running] == [lapsed]


def test_a_retry_extends_the_marker_and_only_its_end_releases_the_waiting_one() -> None:
    record = job("BufferOne")
    record = jobstate.begun(record, ref(T0), T0, jobstate.marker_until(T0, LEASE)).job or record
    extended = jobstate.extended(record, ref(T0).execution_id, T0 + timedelta(hours=1))
    assert extended is not None and extended.overlap.running[0].until == T0 + timedelta(hours=1)
    assert jobstate.extended(extended, ref(T0).execution_id, T0) is None  # already held longer
    later = T0 + timedelta(minutes=10)  # its retry waits; the next occurrence is due
    buffered = jobstate.begun(extended, ref(later), later, jobstate.marker_until(later, LEASE))
    assert buffered.turn == Turn.BUFFER and buffered.job is not None
    assert buffered.job.overlap.waiting is not None
    assert jobstate.begun(buffered.job, ref(later), later, later).turn == Turn.BUFFER  # asks again: still waits
    other = jobstate.ended(buffered.job, "someone-else", later, later)
    assert other.released is None
    done = jobstate.ended(buffered.job, ref(T0).execution_id, later + MINUTE, later + timedelta(minutes=4))
    assert done.released == ref(later) and done.job is not None
    assert [r.ref for r in done.job.overlap.running] == [ref(later)] and done.job.overlap.waiting is None


def test_overrides_and_rewrites() -> None:
    record = jobstate.begun(job("Skip"), ref(T0), T0, T0 + timedelta(minutes=3)).job
    assert record is not None
    forced = ref(T0 + MINUTE, Trigger.RUN_NOW, OverlapPolicy.ALLOW)
    decision = jobstate.begun(record, forced, T0 + MINUTE, T0 + timedelta(minutes=4))
    assert decision.turn == Turn.RUN and decision.job is not None
    assert len(decision.job.overlap.running) == 2  # the forced run marks itself: scheduled ones see it
    buffered = ref(T0 + 2 * MINUTE, Trigger.BACKFILL, OverlapPolicy.BUFFER_ONE)
    waits = jobstate.begun(decision.job, buffered, T0 + 2 * MINUTE, T0 + 2 * MINUTE).job
    assert waits is not None and waits.overlap.waiting is not None
    # On an Allow job, an override keeps the marker for its occurrences: the next one it overrides sees it; an
    # occurrence without an override (or with Allow) neither marks itself nor is held back.
    allow = job(None)
    assert jobstate.begun(allow, ref(T0, Trigger.SCHEDULE), T0, T0 + MINUTE).job is None
    assert jobstate.begun(allow, ref(T0, Trigger.RUN_NOW, OverlapPolicy.ALLOW), T0, T0 + MINUTE).job is None
    first = jobstate.begun(allow, ref(T0, Trigger.BACKFILL, OverlapPolicy.SKIP), T0, T0 + MINUTE)
    assert first.turn == Turn.RUN and first.job is not None and len(first.job.overlap.running) == 1
    second = ref(T0 + SECOND, Trigger.BACKFILL, OverlapPolicy.SKIP)
    assert jobstate.begun(first.job, second, T0 + SECOND, T0 + MINUTE).turn == Turn.SKIP
    assert jobstate.begun(first.job, ref(T0 + SECOND), T0 + SECOND, T0 + MINUTE) == jobstate.Begun(Turn.RUN, None)
    # A rewrite keeps what runs and drops what waits (it was queued for the old definition).
    rewritten = jobstate.written(KEY, waits.properties, waits.state, waits, T0 + 3 * MINUTE, T0)
    assert rewritten.overlap.running == waits.overlap.running and rewritten.overlap.waiting is None


def test_the_ledger_names_a_skip_and_a_wait() -> None:
    record = job("Skip")
    skipped = jobstate.skipped_by_overlap(record, T0, Trigger.SCHEDULE, OverlapPolicy.SKIP, ref(T0 - MINUTE), T0)
    assert (skipped.status.value, skipped.reason and skipped.reason.value) == ("Skipped", "SkippedByOverlap")
    assert "10:59:00" not in skipped.message and "09:59:00Z" in skipped.message and "Skip" in skipped.message
    from shared.model import WaitCause

    waiting = jobstate.waiting(record, T0, Trigger.SCHEDULE, WaitCause.RATE_LIMIT, T0)
    assert (waiting.status.value, waiting.reason and waiting.reason.value) == ("Waiting", "WaitingForRateLimit")
    assert waiting.end_time is None and waiting.execution_id == ref(T0).execution_id
    assert replace(waiting, entry_id="") == waiting


def test_settled_ends_or_extends_in_the_recorders_change() -> None:
    record = jobstate.begun(job("BufferOne"), ref(T0), T0, jobstate.marker_until(T0, LEASE)).job
    assert record is not None
    record = jobstate.begun(record, ref(T0 + MINUTE), T0 + MINUTE, T0 + MINUTE).job
    assert record is not None and record.overlap.waiting is not None
    retry_due = T0 + timedelta(minutes=30)
    held = jobstate.settled(record, ref(T0).execution_id, False, retry_due, T0 + MINUTE, LEASE)
    assert held.released is None and held.job is not None
    assert held.job.overlap.running[0].until == jobstate.marker_until(retry_due, LEASE)
    assert jobstate.settled(record, ref(T0).execution_id, False, None, T0, LEASE).job is None
    done = jobstate.settled(held.job, ref(T0).execution_id, True, None, T0 + 2 * MINUTE, LEASE)
    assert done.released == ref(T0 + MINUTE)


def test_a_lost_waiter_lapses_instead_of_blocking_the_job() -> None:
    record = jobstate.begun(job("BufferOne"), ref(T0), T0, T0 + timedelta(hours=2)).job  # a long run
    assert record is not None
    record = jobstate.begun(record, ref(T0 + MINUTE), T0 + MINUTE, jobstate.marker_until(T0 + MINUTE, LEASE)).job
    assert record is not None and record.overlap.waiting is not None
    # It keeps its place as long as the running one's marker holds (two hours here), asking again or not.
    assert record.overlap.waiting.until == T0 + timedelta(hours=2)
    later = T0 + 2 * MINUTE
    assert jobstate.begun(record, ref(later), later, jobstate.marker_until(later, LEASE)).turn == Turn.SKIP  # one waits
    again = jobstate.begun(
        record, ref(T0 + MINUTE), later, jobstate.marker_until(later, LEASE)
    )  # the waiter asks again
    assert again.turn == Turn.BUFFER and again.job is None  # nothing to change
    longer = jobstate.extended(record, ref(T0).execution_id, T0 + timedelta(hours=3))  # a retry an hour later
    assert longer is not None and longer.overlap.waiting is not None
    assert longer.overlap.waiting.until == T0 + timedelta(hours=3)  # held as long as what it waits for
    lost = T0 + timedelta(hours=2, minutes=1)  # the runner vanished, and the waiter's message was lost too
    decision = jobstate.begun(record, ref(lost), lost, jobstate.marker_until(lost, LEASE))
    assert decision.turn == Turn.RUN and decision.job is not None
    assert [r.ref for r in decision.job.overlap.running] == [ref(lost)] and decision.job.overlap.waiting is None
    done = jobstate.ended(record, ref(T0).execution_id, lost, jobstate.marker_until(lost, LEASE))
    assert done.released is None and done.job is not None and not done.job.overlap  # nothing lapsed is promoted
