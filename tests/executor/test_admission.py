"""Admission (shared/executor/admission.py): each answer it gives one attempt at its second (Run, Wait for each
cause, Skip for each reason), what that answer says, and what the ledger, the claim, the guard and the queue hold
afterwards. On the memory store (held to Azurite's behaviour by tests/store/contract), its queue on the same
hand-moved clock, so a message queued again is received by moving the clock to its due. A check that admission
skipped, or took in another order, gives another answer or leaves another ledger."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from shared.executor import limit_slots
from shared.executor.admission import RAN, Run, Skip, Wait
from shared.executor.limits import PACING_SHARE
from shared.jobstate import pacer_key
from shared.keys import CollectionKey, JobKey
from shared.leases import Guard
from shared.model import PREVIEW_API_VERSION, JobState, LedgerReason, WaitCause
from shared.occurrence import OccurrenceBatch, OccurrenceMessage, Trigger
from shared.records import JobRecord, LedgerEntry
from shared.runtime import Runtime
from shared.store import Claim
from shared.store.claims import Wanted, claim_partition, claim_row
from shared.timings import Timings
from tests.support.clock import ManualClock
from tests.support.manual_time import runtime_in_memory
from tests.support.scheduler_client import JC, RG, SUB, call

NEWER = {"api-version": PREVIEW_API_VERSION}
KEY = CollectionKey(SUB, RG, JC)
TARGET = "http://127.0.0.1:9/"  # never called: admission answers before the action


@pytest.fixture
def rt(clock: ManualClock) -> Iterator[Runtime]:
    # An attempt without a concurrency slot is queued again at once instead of waiting in its coroutine.
    with runtime_in_memory(clock, timings=Timings(concurrency_wait=timedelta(0))) as runtime:
        yield runtime


def collection(rt: Runtime, **properties: Any) -> None:
    body = {"location": "West US", "properties": {"sku": {"name": "Standard"}, **properties}}
    response = call(rt, "JobCollections_CreateOrUpdate", "PUT", body=body, query=NEWER)
    assert response.status == 201, response.body


def job(rt: Runtime, name: str, start: datetime, **properties: Any) -> JobRecord:
    body = {
        "properties": {
            "startTime": start.isoformat(),
            "recurrence": {"frequency": "Minute", "interval": 1},
            "action": {"type": "Http", "request": {"uri": TARGET, "method": "POST"}},
            **properties,
        }
    }
    response = call(rt, "Jobs_CreateOrUpdate", "PUT", name, body, query=NEWER)
    assert response.status in (200, 201), response.body
    record = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
    assert record is not None
    return record


class Attempt:
    """One attempt as the batch hands it to `fire`: its message, the job as read, its claim, held by a guard."""

    def __init__(self, rt: Runtime, record: JobRecord, message: OccurrenceMessage) -> None:
        self.rt, self.job, self.message = rt, record, message
        now = rt.clock.now()
        wanted = Wanted(message.job, message.claim_id, "runner-1", now + timedelta(minutes=1))
        (claim,) = rt.store.claims.claim_each([wanted], now)
        assert isinstance(claim, Claim)
        self.claim = claim
        self.guard = Guard(OccurrenceBatch((message,)))
        self.guard.hold(claim)
        rt.store.queue.client.clear_messages()  # what a PUT queued for the minute ahead: played by hand here

    def admit(self) -> Run | Wait | Skip:
        admission = self.rt.executor.attempts.admission
        return asyncio.run(admission.admit(self.message, self.job, self.claim, self.guard))

    def claim_status(self) -> str | None:
        """ "running" (held), "done", or None (given back)."""
        row = self.rt.store.claims.table.get(
            claim_partition(self.message.job), claim_row(self.message.job, self.message.claim_id)
        )
        return None if row is None else str(row["Status"])

    def held(self) -> bool:
        return self.message.claim_id in self.guard.claims


def scheduled(record: JobRecord, occurrence: datetime, due: datetime | None = None) -> OccurrenceMessage:
    return OccurrenceMessage(record.key, occurrence, due or occurrence, generation=record.generation)


def ledger(rt: Runtime, record: JobRecord) -> list[LedgerEntry]:
    entries, _ = rt.store.history.ledger_page(record.key, None, None, None, 100)
    return entries


def reasons(rt: Runtime, record: JobRecord) -> list[tuple[datetime, LedgerReason | None]]:
    return [(entry.occurrence, entry.reason) for entry in ledger(rt, record)]


def queued(rt: Runtime) -> int:
    """Messages in the occurrence queue, hidden ones included."""
    return rt.store.queue.client.get_queue_properties().approximate_message_count


def requeued(rt: Runtime, clock: ManualClock, due: datetime) -> list[OccurrenceMessage]:
    """The attempts queued again, received at `due` (the clock moved there): before it, nothing shows."""
    clock.current = due - rt.settings.timings.early_visibility - timedelta(seconds=1)
    assert rt.store.queue.client.peek_messages() == []
    clock.current = due
    messages = rt.store.queue.client.receive_messages(max_messages=32)
    return [item for message in messages for item in OccurrenceBatch.from_json(message.content).items]


def test_an_attempt_with_nothing_in_its_way_runs_holding_nothing_and_writing_nothing(
    rt: Runtime, clock: ManualClock
) -> None:
    collection(rt)
    record = job(rt, "j", clock.now() + timedelta(minutes=1))
    attempt = Attempt(rt, record, scheduled(record, clock.now()))
    answer = attempt.admit()
    assert isinstance(answer, Run) and answer.job == record and answer.admitted is not None
    assert answer.admitted.slot is None and answer.admitted.before_send is None and answer.admitted.waited_for is None
    assert attempt.claim_status() == "running" and attempt.held()
    assert ledger(rt, record) == [] and queued(rt) == 0


def test_an_attempt_runs_holding_its_concurrency_slot_and_gives_it_back_at_release(
    rt: Runtime, clock: ManualClock
) -> None:
    collection(rt, maxConcurrentExecutions=1)
    record = job(rt, "j", clock.now() + timedelta(minutes=1))
    attempt = Attempt(rt, record, scheduled(record, clock.now()))
    answer = attempt.admit()
    assert isinstance(answer, Run) and answer.job == record
    assert answer.admitted is not None and answer.admitted.slot == attempt.message.claim_id
    assert rt.store.gates is not None
    assert [lease.holder for lease in rt.store.gates.state(KEY).held(clock.now())] == [attempt.message.claim_id]
    assert attempt.claim_status() == "running" and attempt.held() and ledger(rt, record) == []
    asyncio.run(rt.executor.attempts.admission.release(answer))
    assert rt.store.gates.state(KEY).held(clock.now()) == ()


def test_an_attempt_without_a_concurrency_slot_waits_queued_again_its_claim_given_back(
    rt: Runtime, clock: ManualClock
) -> None:
    collection(rt, maxConcurrentExecutions=1)
    record = job(rt, "j", clock.now() + timedelta(minutes=1))
    assert isinstance(Attempt(rt, record, scheduled(record, clock.now())).admit(), Run)  # holds the one slot
    fired = clock.now() - timedelta(seconds=10)  # it came 10 s ago: its wait shows in the ledger
    second = Attempt(rt, record, scheduled(record, fired))
    answer = second.admit()
    assert answer == Wait(WaitCause.CONCURRENCY, clock.now() + rt.settings.timings.backoff_first)
    assert second.claim_status() is None and not second.held()
    assert reasons(rt, record) == [(fired, LedgerReason.WAITING_FOR_CONCURRENCY)]
    (again,) = requeued(rt, clock, answer.due)
    assert (again.claim_id, again.waited_for, again.fire_instant) == (second.message.claim_id, answer.cause, fired)


def test_an_attempt_whose_rate_slot_is_far_off_waits_for_it_queued_again(rt: Runtime, clock: ManualClock) -> None:
    collection(rt, targetRateLimits=[{"host": "127.0.0.1", "requestsPerSecond": 1}])
    record = job(rt, "j", clock.now() + timedelta(minutes=1))
    stored = rt.store.collections.get(KEY)
    assert stored is not None and stored.definition.properties is not None
    (rule,) = stored.definition.properties.target_rate_limits or []
    assert rt.store.pacers is not None  # twenty requests booked ahead of it: its slot is about 20 s off
    limit_slots.reserve(rt.store.pacers, rt.store.timings, KEY, pacer_key(rule), 20, PACING_SHARE, clock.now())
    attempt = Attempt(rt, record, scheduled(record, clock.now()))
    answer = attempt.admit()
    assert isinstance(answer, Wait) and answer.cause == WaitCause.RATE_LIMIT
    assert answer.due - clock.now() > rt.settings.timings.early_hop
    assert attempt.claim_status() is None and not attempt.held()
    assert reasons(rt, record) == [(clock.now(), LedgerReason.WAITING_FOR_RATE_LIMIT)]
    fired = clock.now()
    (again,) = requeued(rt, clock, answer.due)
    assert (again.claim_id, again.waited_for, again.fire_instant) == (attempt.message.claim_id, answer.cause, fired)
    assert again.paced  # it holds its rate slot: it does not reserve another


def test_an_occurrence_while_the_previous_one_runs_under_buffer_one_waits_for_it(
    rt: Runtime, clock: ManualClock
) -> None:
    collection(rt)
    record = job(rt, "j", clock.now(), overlapPolicy="BufferOne")
    running = Attempt(rt, record, scheduled(record, clock.now())).admit()
    assert isinstance(running, Run) and running.job.overlap.running  # its marker, written under the ETag
    following = clock.now() + timedelta(minutes=1)
    clock.advance(timedelta(minutes=1))
    second = Attempt(rt, running.job, scheduled(record, following))
    answer = second.admit()
    marker = rt.store.jobs.get(record.key)
    assert marker is not None and marker.overlap.waiting is not None
    assert answer == Wait(WaitCause.PREVIOUS, marker.overlap.waiting.until)
    assert second.claim_status() is None and not second.held()
    assert reasons(rt, record) == [(following, LedgerReason.WAITING_FOR_PREVIOUS)]
    (again,) = requeued(rt, clock, answer.due)  # the fallback, should the running one's release be lost
    assert (again.claim_id, again.waited_for, again.fire_instant) == (second.message.claim_id, answer.cause, following)


def test_an_occurrence_while_the_previous_one_runs_under_skip_is_skipped(rt: Runtime, clock: ManualClock) -> None:
    collection(rt)
    record = job(rt, "j", clock.now(), overlapPolicy="Skip")
    running = Attempt(rt, record, scheduled(record, clock.now())).admit()
    assert isinstance(running, Run)
    following = clock.now() + timedelta(minutes=1)
    clock.advance(timedelta(minutes=1))
    second = Attempt(rt, running.job, scheduled(record, following))
    assert second.admit() == Skip("overlap", LedgerReason.SKIPPED_BY_OVERLAP)
    assert second.claim_status() == "done" and not second.held() and queued(rt) == 0
    assert reasons(rt, record) == [(following, LedgerReason.SKIPPED_BY_OVERLAP)]


def test_an_occurrence_that_came_missed_is_let_go_by_its_missed_run_policy(rt: Runtime, clock: ManualClock) -> None:
    collection(rt)
    start = clock.now() + timedelta(minutes=1)
    record = job(rt, "j", start, missedRunPolicy={"type": "Skip"}, overlapPolicy="Skip")
    clock.advance(timedelta(minutes=4))  # queued before an outage, it comes 3 min late
    attempt = Attempt(rt, record, scheduled(record, start))
    assert attempt.admit() == Skip("missed", LedgerReason.SKIPPED_BY_POLICY)
    assert attempt.claim_status() == "done" and not attempt.held()
    assert reasons(rt, record) == [(start, LedgerReason.SKIPPED_BY_POLICY)]
    after = rt.store.jobs.get(record.key)
    assert after is not None and not after.overlap.running  # let go before its overlap turn: no marker taken


def test_an_occurrence_of_a_disabled_job_is_skipped(rt: Runtime, clock: ManualClock) -> None:
    collection(rt)
    record = job(rt, "j", clock.now() + timedelta(minutes=1), state="Disabled")
    assert record.state == JobState.DISABLED
    attempt = Attempt(rt, record, scheduled(record, clock.now()))
    assert attempt.admit() == Skip("job_disabled", LedgerReason.JOB_DISABLED)
    assert attempt.claim_status() == "done" and not attempt.held()
    assert reasons(rt, record) == [(clock.now(), LedgerReason.JOB_DISABLED)]


def test_an_occurrence_of_a_suspended_collection_is_skipped(rt: Runtime, clock: ManualClock) -> None:
    collection(rt, maxConcurrentExecutions=1)
    record = job(rt, "j", clock.now() + timedelta(minutes=1))
    assert call(rt, "JobCollections_Patch", "PATCH", body={"properties": {"state": "Suspended"}}).status == 200
    attempt = Attempt(rt, record, scheduled(record, clock.now()))
    assert attempt.admit() == Skip("collection_not_enabled", LedgerReason.COLLECTION_SUSPENDED)
    assert attempt.claim_status() == "done" and not attempt.held()
    assert reasons(rt, record) == [(clock.now(), LedgerReason.COLLECTION_SUSPENDED)]
    assert rt.store.gates is not None and rt.store.gates.state(KEY).held(clock.now()) == ()  # refused before limits


def test_a_run_now_of_a_job_redefined_before_its_second_is_skipped(rt: Runtime, clock: ManualClock) -> None:
    collection(rt)
    record = job(rt, "j", clock.now() + timedelta(minutes=1))
    message = replace(scheduled(record, clock.now()), trigger=Trigger.RUN_NOW)
    attempt = Attempt(rt, record, message)
    redefined = job(rt, "j", clock.now() + timedelta(minutes=2))  # read again at its second: not its generation
    assert redefined.generation != record.generation
    assert attempt.admit() == Skip("job_changed", LedgerReason.JOB_CHANGED)
    assert attempt.claim_status() == "done" and not attempt.held()
    assert reasons(rt, record) == [(clock.now(), LedgerReason.JOB_CHANGED)]


def test_a_taken_over_attempt_its_first_runner_finished_is_skipped_without_a_note(
    rt: Runtime, clock: ManualClock
) -> None:
    collection(rt)
    record = job(rt, "j", clock.now() + timedelta(minutes=1))
    attempt = Attempt(rt, record, scheduled(record, clock.now()))
    attempt.claim = replace(attempt.claim, taken_over=True)
    # Its first runner recorded it (the job counts its claim), then died before its claim said so.
    rt.store.jobs.replace(replace(record, recent_claims=(attempt.message.claim_id,)))
    assert attempt.admit() == Skip(RAN, None)
    assert attempt.claim_status() == "done" and not attempt.held()
    assert ledger(rt, record) == []
