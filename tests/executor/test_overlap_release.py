"""The release of an occurrence waiting under overlapPolicy BufferOne when the normal release cannot come: the
fallback copy of its message brings it back once its place lapses (the running one's runner vanished, so no end
ever releases it), and a running occurrence dropped as superseded (its job redefined) lets the waiting one go at
once (not_run.py `record_superseded`). Through the real executor, store and queue (Azurite) and a real local HTTP
target; time is a hand-moved clock, the queue's visibility real."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from shared.executor import overlap_marker
from shared.executor.overlap_marker import ref_of
from shared.jobstate import marker_until
from shared.jobstate.overlap import Turn
from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, JobExecutionStatus, WaitCause
from shared.occurrence import OccurrenceMessage, Trigger
from shared.records import LedgerEntry
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.peers.servers import Server
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
KEY = JobKey(SUB, RG, JC, "j")
T = datetime.now(UTC).replace(microsecond=0)
HEADER = "x-ms-scheduler-expected-execution-time"


def put_job(rt: Runtime, url: str, **headers: str) -> int:
    body: dict[str, Any] = {
        "properties": {
            "startTime": (T + timedelta(days=1)).isoformat(),  # the test queues its occurrences itself
            "overlapPolicy": "BufferOne",
            "action": {
                "type": "Http",
                "request": {"uri": url, "method": "POST", "headers": headers},
                "retryPolicy": {"retryType": "None"},
            },
        }
    }
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "j", body, query=NEWER).status in (200, 201)
    job = rt.store.jobs.get(KEY)
    assert job is not None
    return job.generation


def occurrence(at: datetime, generation: int) -> OccurrenceMessage:
    return OccurrenceMessage(KEY, at, at, Trigger.RUN_NOW, generation=generation)


def mark_running(rt: Runtime, message: OccurrenceMessage, now: datetime) -> None:
    """`message`'s first attempt marked its occurrence running, and its runner is still at its action (or died)."""
    decided, _ = overlap_marker.begin(
        rt.store.jobs, KEY, ref_of(message), now, marker_until(message.due, rt.settings.timings.running_lease)
    )
    assert decided.turn == Turn.RUN


def ledger(rt: Runtime) -> dict[datetime, LedgerEntry]:
    entries, _ = rt.store.history.ledger_page(KEY, None, None, None, 100)
    return {entry.occurrence: entry for entry in entries}


def stamp(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_waiter_whose_release_was_lost_runs_from_its_fallback_copy_when_its_place_lapses(
    settings: Settings, target: Server
) -> None:
    clock = ManualClock(T)
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    generation = put_job(rt, target.url)
    first = occurrence(T - timedelta(seconds=1), generation)
    mark_running(rt, first, first.due)  # then its runner vanished: no end, so no release, ever
    # The next occurrence, delivered late (so its fallback copy is due within seconds of real time): it waits.
    second = occurrence(T, generation)
    clock.current = marker_until(T, rt.settings.timings.running_lease) - timedelta(seconds=2)
    rt.executor.run(second)
    assert target.hits == []
    assert ledger(rt)[T].status == JobExecutionStatus.WAITING
    job = rt.store.jobs.get(KEY)
    assert job is not None and job.overlap.waiting is not None
    assert job.overlap.waiting.ref.execution_id == second.execution_id
    # Its place lapses (the vanished one's marker is long gone): the fallback copy comes and runs it.
    clock.current = job.overlap.waiting.until + timedelta(seconds=1)
    drain(rt, 60, until=lambda: bool(target.hits))
    assert [hit.headers[HEADER] for hit in target.hits] == [stamp(T)]
    entry = ledger(rt)[T]
    assert (entry.status, entry.waited_for) == (JobExecutionStatus.COMPLETED, WaitCause.PREVIOUS)
    assert entry.execution_id == second.execution_id  # its own identity, kept through the wait


def test_a_running_occurrence_dropped_as_superseded_lets_the_waiting_one_go_at_once(
    settings: Settings, target: Server
) -> None:
    clock = ManualClock(T)
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    old = put_job(rt, target.url)
    running = occurrence(T, old)
    mark_running(rt, running, T)
    # The job is redefined (what runs is kept); an occurrence of the new definition comes and waits for it.
    new = put_job(rt, target.url, **{"X-Version": "2"})
    assert new != old
    waiter = occurrence(T + timedelta(seconds=10), new)
    clock.current = waiter.due
    rt.executor.run(waiter)
    assert target.hits == [] and ledger(rt)[waiter.occurrence].status == JobExecutionStatus.WAITING
    # The running occurrence's message comes again (a redelivery), for the old definition: it is dropped, its
    # marker let go, and the waiting occurrence queued at once (not after its fallback's 3 minutes).
    clock.current = T + timedelta(seconds=20)
    rt.executor.run(running)
    job = rt.store.jobs.get(KEY)
    assert job is not None and [r.ref.execution_id for r in job.overlap.running] == [waiter.execution_id]
    drain(rt, 30, until=lambda: bool(target.hits))
    assert [(hit.headers[HEADER], hit.headers["x-version"]) for hit in target.hits] == [(stamp(waiter.occurrence), "2")]
    entry = ledger(rt)[waiter.occurrence]
    assert (entry.status, entry.waited_for) == (JobExecutionStatus.COMPLETED, WaitCause.PREVIOUS)
