"""An occurrence queued by a request or by an earlier attempt (a backfill's, a run-now, a retry) is checked against
its job at its own second, not only when its batch was read: a delete or a disable answered before that second
drops it, and the ledger names the ones a disabled job did not run (reason JobDisabled). A backfill's occurrences
come five to a queue message, one second apart, so the batch's read is up to four seconds old at the last one.

Through the real API, store and queue (Azurite), the real executor and a real local HTTP target, on the real clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, JobExecutionStatus, LedgerReason
from shared.occurrence import OccurrenceMessage, Trigger
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.claims import claim_partition, claim_row
from tests.executor.peers.servers import Hit, Server
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
NAME = "del1"
KEY = JobKey(SUB, RG, JC, NAME)
PATIENCE = 30.0  # seconds of real time for anything to happen on a busy machine
AFTER = 3.0  # seconds past the last second of what was queued: what a late occurrence would need to show up


def z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def put_job(rt: Runtime, url: str) -> int:
    """A job every minute since an hour ago (its next scheduled occurrence is not run by these tests)."""
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=1)
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


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def backfill_five_minutes(rt: Runtime) -> tuple[list[str], datetime]:
    """Backfill the last five whole minutes: their execution tags, and the second the last one is due."""
    end = datetime.now(UTC).replace(second=0, microsecond=0)
    answer = call(rt, "Jobs_Backfill", "POST", NAME, {"from": z(end - timedelta(minutes=5)), "to": z(end)}, query=NEWER)
    assert answer.status == 200, answer.body
    value = answer.body["value"]
    assert len(value) == 5
    return [o["executionTag"] for o in value], datetime.fromisoformat(value[-1]["fireTime"].replace("Z", "+00:00"))


def run_backfill_then(rt: Runtime, target: Server, change: Callable[[], None]) -> tuple[list[Hit], list[Hit], set[str]]:
    """Backfill five minutes, `change` the job once the first backfilled request arrived, and play the queue
    trigger past the backfill's last second: (the backfilled requests, those that arrived after `change`
    answered, the tags of the backfilled occurrences)."""
    tags, last = backfill_five_minutes(rt)

    def backfilled() -> list[Hit]:
        return [h for h in list(target.hits) if h.headers.get("idempotency-key") in tags]

    done_after = last + timedelta(seconds=AFTER)
    trigger = threading.Thread(
        target=drain, args=(rt, PATIENCE), kwargs={"until": lambda: datetime.now(UTC) > done_after}, daemon=True
    )
    trigger.start()
    wait_until(lambda: bool(backfilled()), "the first backfilled request")
    change()
    answered = datetime.now(UTC)
    trigger.join(PATIENCE + 10)
    assert not trigger.is_alive()
    hits = backfilled()
    return hits, [h for h in hits if h.at > answered], set(tags)


def test_a_backfill_stops_at_the_next_second_once_its_job_is_deleted(settings: Settings, target: Server) -> None:
    rt = Runtime.create(settings)
    make_collection(rt)
    put_job(rt, target.url)

    def delete() -> None:
        assert call(rt, "Jobs_Delete", "DELETE", NAME).status == 200

    hits, late, _ = run_backfill_then(rt, target, delete)
    assert late == [], f"{len(late)} backfilled request(s) arrived after the DELETE answered"
    assert hits  # the first one ran (the others, unless the DELETE took seconds to answer, did not)


def test_a_backfill_stops_at_the_next_second_once_its_job_is_disabled_and_the_ledger_names_the_rest(
    settings: Settings, target: Server
) -> None:
    rt = Runtime.create(settings)
    make_collection(rt)
    put_job(rt, target.url)

    def disable() -> None:
        answer = call(rt, "Jobs_Patch", "PATCH", NAME, {"properties": {"state": "Disabled"}}, query=NEWER)
        assert answer.status == 200, answer.body

    hits, late, tags = run_backfill_then(rt, target, disable)
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
    settings: Settings, target: Server, trigger: Trigger, attempt: int, removal: str
) -> None:
    """The attempt's batch read its job and claimed it; the job is deleted (or disabled) before its second."""
    rt = Runtime.create(settings)
    make_collection(rt)
    generation = put_job(rt, target.url)
    due = datetime.now(UTC) + timedelta(seconds=5)  # a run-now that waited for a limit comes like this, too
    message = OccurrenceMessage(KEY, due.replace(microsecond=0), due, trigger, attempt=attempt, generation=generation)
    runner = threading.Thread(target=rt.executor.run, args=(message,), daemon=True)
    runner.start()
    claims = rt.store.claims.table
    wait_until(
        lambda: claims.get(claim_partition(KEY), claim_row(KEY, message.claim_id)) is not None,
        "the attempt's claim (its job read)",
    )
    assert datetime.now(UTC) < due - timedelta(seconds=1), "the machine is too busy for this test's timing"
    if removal == "deleted":
        assert call(rt, "Jobs_Delete", "DELETE", NAME).status == 200
    else:
        assert call(rt, "Jobs_Patch", "PATCH", NAME, {"properties": {"state": "Disabled"}}, query=NEWER).status == 200
    assert datetime.now(UTC) < due, "the machine is too busy for this test's timing"
    runner.join(PATIENCE)
    assert not runner.is_alive()
    time.sleep(0.5)  # an action that went out would have arrived by now
    assert target.hits == []
    if removal == "disabled":
        entries, _ = rt.store.history.ledger_page(KEY, None, None, None, 100)
        named = [(e.execution_id, e.status, e.reason) for e in entries]
        if attempt == 0:  # a retry leaves the entry its first attempt wrote
            assert named == [(message.execution_id, JobExecutionStatus.SKIPPED, LedgerReason.JOB_DISABLED)]
        else:
            assert named == []
