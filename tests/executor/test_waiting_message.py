"""An attempt queued again to wait for a limit (shared/occurrence/message.py `OccurrenceMessage.waiting`): it keeps its
identity (execution id, claim id) and its first fire instant through every wait, says what it waits for and
whether its due is a rate slot it holds; a retry or the error action that follows starts afresh; older
messages without the fields read as before. Pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.keys import JobKey
from shared.model import JobHistoryActionName, WaitCause
from shared.occurrence import OccurrenceBatch, OccurrenceMessage

DUE = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
MESSAGE = OccurrenceMessage(JobKey("sub", "rg", "jc", "job"), DUE, DUE, generation=3)


def test_a_waiting_attempt_keeps_its_identity_and_first_fire_instant_through_the_queue() -> None:
    paced = MESSAGE.waiting(DUE + timedelta(seconds=12, microseconds=20_000), WaitCause.RATE_LIMIT, paced=True)
    again = paced.waiting(DUE + timedelta(seconds=20), WaitCause.CONCURRENCY)
    for message in (paced, again):
        read = OccurrenceBatch.from_json(OccurrenceBatch((message,)).to_json()).items[0]
        assert read == message
        assert (read.execution_id, read.claim_id) == (MESSAGE.execution_id, MESSAGE.claim_id)
        assert read.fire_instant == DUE
    assert (paced.paced, paced.waited_for) == (True, WaitCause.RATE_LIMIT)
    assert (again.paced, again.waited_for) == (False, WaitCause.CONCURRENCY)  # it reserves its rate slot anew


def test_a_retry_or_error_action_after_a_wait_starts_afresh() -> None:
    waited = MESSAGE.waiting(DUE + timedelta(seconds=30), WaitCause.RATE_LIMIT, paced=True)
    for follow_up in (waited.retry(DUE + timedelta(minutes=1)), waited.error_action(DUE + timedelta(minutes=1))):
        assert (follow_up.first_due, follow_up.waited_for, follow_up.paced) == (None, None, False)
        assert follow_up.fire_instant == DUE + timedelta(minutes=1)
    assert waited.error_action(DUE).action == JobHistoryActionName.ERROR_ACTION


def test_a_message_without_the_wait_fields_reads_as_before() -> None:
    text = MESSAGE.to_json()
    assert '"fd"' not in text and '"wf"' not in text and '"pc"' not in text
    read = OccurrenceMessage.from_json(text)
    assert (read.first_due, read.waited_for, read.paced, read.fire_instant) == (None, None, False, DUE)
