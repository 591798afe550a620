"""An occurrence queued by a request or by an earlier attempt (a backfill's, a run-now, a retry) is checked against
its job at its own second, not only when its batch was read: a delete or a disable answered before that second
drops it, and the ledger names the ones a disabled job did not run (reason JobDisabled). A backfill's occurrences
come five to a queue message, one second apart, so the batch's read is up to four seconds old at the last one.

Through the real API, store, queue and executor and a real local HTTP target, on the memory store and a ManualClock
(tests/support/manual_time.py): the seconds are ours, so the clock moves in small steps while the queue trigger
runs, and a change comes between two of them, the clock standing still while it is made.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from shared.keys import JobKey
from shared.manual_clock import ManualClock
from shared.model import PREVIEW_API_VERSION, JobExecutionStatus, LedgerReason
from shared.occurrence import OccurrenceMessage, Trigger
from shared.runtime import Runtime
from shared.store.claims import claim_partition, claim_row
from tests.executor.peers.servers import Hit, Server
from tests.support.manual_time import HostTrigger, step_until
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
NAME = "del1"
KEY = JobKey(SUB, RG, JC, NAME)
AFTER = 3.0  # seconds past the last second of what was queued: what a late occurrence would need to show up
STEP = 0.1  # seconds the clock moves per step
STEPS = 1000  # at most, per wait


def z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def put_job(rt: Runtime, url: str) -> int:
    """A job every minute since an hour ago (its next scheduled occurrence is not run by these tests)."""
    start = rt.clock.now().replace(second=0, microsecond=0) - timedelta(hours=1)
    body: dict[str, Any] = {
        "properties": {
            "startTime": start.isoformat(),
            "recurrence": {"frequency": "Minute", "interval": 1},
            "action": {
                "type": "Http",
                "request": {"uri": url, "method": "POST"},
                "retryPolicy": {"retryType": "None"},
            },
        }
    }
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", NAME, body, query=NEWER).status == 201
    job = rt.store.jobs.get(KEY)
    assert job is not None
    return job.generation


def backfill_five_minutes(rt: Runtime) -> tuple[list[str], datetime]:
    """Backfill the last five whole minutes: their execution tags, and the second the last one is due."""
    end = rt.clock.now().replace(second=0, microsecond=0)
    answer = call(rt, "Jobs_Backfill", "POST", NAME, {"from": z(end - timedelta(minutes=5)), "to": z(end)}, query=NEWER)
    assert answer.status == 200, answer.body
    value = answer.body["value"]
    assert len(value) == 5
    return [o["executionTag"] for o in value], datetime.fromisoformat(value[-1]["fireTime"].replace("Z", "+00:00"))


def run_backfill_then(
    rt: Runtime, clock: ManualClock, target: Server, change: Callable[[], None]
) -> tuple[list[Hit], list[Hit], set[str]]:
    """Backfill five minutes, `change` the job once the first backfilled request arrived (the clock standing still
    meanwhile), and play the queue trigger past the backfill's last second, until its batch is done: (the
    backfilled requests, those that arrived after `change` answered, the tags of the backfilled occurrences)."""
    tags, last = backfill_five_minutes(rt)

    def backfilled() -> list[Hit]:
        return [h for h in list(target.hits) if h.headers.get("idempotency-key") in tags]

    done_after = last + timedelta(seconds=AFTER)
    host = HostTrigger(rt).start()
    try:
        step_until(clock, lambda: bool(backfilled()), STEP, STEPS)
        change()
        answered = len(backfilled())  # the hits are in the order they arrived
        step_until(clock, lambda: clock.now() > done_after and host.idle(), STEP, STEPS)
    finally:
        host.stop()
    host.raise_errors()
    hits = backfilled()
    return hits, hits[answered:], set(tags)


def test_a_backfill_stops_at_the_next_second_once_its_job_is_deleted(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    make_collection(rt)
    put_job(rt, target.url)

    def delete() -> None:
        assert call(rt, "Jobs_Delete", "DELETE", NAME).status == 200

    hits, late, _ = run_backfill_then(rt, clock, target, delete)
    assert late == [], f"{len(late)} backfilled request(s) arrived after the DELETE answered"
    assert hits  # the first one ran (the others, unless the DELETE took seconds to answer, did not)


def test_a_backfill_stops_at_the_next_second_once_its_job_is_disabled_and_the_ledger_names_the_rest(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    make_collection(rt)
    put_job(rt, target.url)

    def disable() -> None:
        answer = call(rt, "Jobs_Patch", "PATCH", NAME, {"properties": {"state": "Disabled"}}, query=NEWER)
        assert answer.status == 200, answer.body

    hits, late, tags = run_backfill_then(rt, clock, target, disable)
    assert late == [], f"{len(late)} backfilled request(s) arrived after the disable answered"
    ran = {h.headers["idempotency-key"] for h in hits}
    entries, _ = rt.store.history.ledger_page(KEY, None, None, None, 100)
    backfilled = {e.execution_id: e for e in entries if e.trigger == Trigger.BACKFILL.value}
    assert set(backfilled) == tags  # every backfilled occurrence is named, run or not
    for tag, entry in backfilled.items():
        if tag in ran:
            assert entry.status == JobExecutionStatus.COMPLETED
        else:
            assert (entry.status, entry.reason) == (JobExecutionStatus.SKIPPED, LedgerReason.JOB_DISABLED)


@pytest.mark.parametrize(
    ("trigger", "attempt"),
    [(Trigger.RUN_NOW, 0), (Trigger.BACKFILL, 0), (Trigger.SCHEDULE, 1)],
    ids=["run-now", "backfilled", "retry"],
)
@pytest.mark.parametrize("removal", ["deleted", "disabled"])
def test_an_attempt_read_before_its_second_does_not_run_when_its_job_is_removed_before_it(
    rt: Runtime, clock: ManualClock, target: Server, trigger: Trigger, attempt: int, removal: str
) -> None:
    """The attempt's batch read its job and claimed it; the job is deleted (or disabled) before its second."""
    make_collection(rt)
    generation = put_job(rt, target.url)
    due = clock.now() + timedelta(seconds=5)  # a run-now that waited for a limit comes like this, too
    message = OccurrenceMessage(KEY, due.replace(microsecond=0), due, trigger, attempt=attempt, generation=generation)
    runner = threading.Thread(target=rt.executor.run, args=(message,), daemon=True)
    runner.start()
    claims = rt.store.claims.table
    step_until(  # the attempt's claim: its job read
        clock, lambda: claims.get(claim_partition(KEY), claim_row(KEY, message.claim_id)) is not None, STEP, STEPS
    )
    assert clock.now() < due - timedelta(seconds=1), "the claim came late on the clock"
    if removal == "deleted":
        assert call(rt, "Jobs_Delete", "DELETE", NAME).status == 200
    else:
        assert call(rt, "Jobs_Patch", "PATCH", NAME, {"properties": {"state": "Disabled"}}, query=NEWER).status == 200
    assert clock.now() < due, "the clock stands still while the job is removed"
    step_until(clock, lambda: not runner.is_alive(), STEP, STEPS)  # past its second: it ended without running
    time.sleep(0.5)  # an action that went out would have arrived by now (real time: the network's)
    assert target.hits == []
    if removal == "disabled":
        entries, _ = rt.store.history.ledger_page(KEY, None, None, None, 100)
        named = [(e.execution_id, e.status, e.reason) for e in entries]
        if attempt == 0:  # a retry leaves the entry its first attempt wrote
            assert named == [(message.execution_id, JobExecutionStatus.SKIPPED, LedgerReason.JOB_DISABLED)]
        else:
            assert named == []
