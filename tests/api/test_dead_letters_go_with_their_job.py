"""A job's dead letters go with it: deleting the job removes its own (another job's stay), and deleting the
collection removes every one left, so a job or collection created again under the same name finds none."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.keys import CollectionKey, JobKey
from shared.model import JobExecutionStatus, JobHistoryActionName
from shared.occurrence import OccurrenceMessage, Trigger
from shared.records import HistoryRecord
from shared.runtime import Runtime
from shared.store.dead_letters import DeadLetters, DeadLetterState, row
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection, settle

ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}
WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def dead_letter(rt: Runtime, job: str, minute: int) -> None:
    """A dead letter as the recorder leaves it (store/dead_letters.py `row`), for `job`'s occurrence at `minute`."""
    occurrence = WHEN.replace(minute=minute)
    message = OccurrenceMessage(JobKey(SUB, RG, JC, job), occurrence, occurrence, Trigger.SCHEDULE, generation=1)
    history = HistoryRecord(
        key=message.job,
        execution_id=message.execution_id,
        expected_execution_time=occurrence,
        start_time=occurrence,
        end_time=occurrence,
        action_name=JobHistoryActionName.MAIN_ACTION,
        status=JobExecutionStatus.FAILED,
        message="Http Action - Response from host '127.0.0.1': 'Internal Server Error'",
    )
    letters(rt).table.upsert(row(message, history, DeadLetterState.DEAD_LETTERED))


def letters(rt: Runtime) -> DeadLetters:
    return DeadLetters(rt.store.history.table_for(CollectionKey(SUB, RG, JC)))


def jobs_of_letters(rt: Runtime) -> list[str]:
    return sorted(letter.job for letter in letters(rt).each(CollectionKey(SUB, RG, JC)))


def test_deleting_a_job_or_its_collection_deletes_its_dead_letters(runtime: Runtime) -> None:
    rt = runtime
    make_collection(rt)
    for name in ("kept", "gone"):
        assert call(rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": {"action": ACTION}}).status == 201
    for minute in (1, 2):
        dead_letter(rt, "gone", minute)
    dead_letter(rt, "kept", 3)
    assert jobs_of_letters(rt) == ["gone", "gone", "kept"]  # what the deletes below must take away

    assert call(rt, "Jobs_Delete", "DELETE", "gone").status == 200
    assert jobs_of_letters(rt) == ["kept"]

    assert call(rt, "JobCollections_Delete", "DELETE").status == 200
    settle(rt)  # the collection's purge, queued after the answer
    assert jobs_of_letters(rt) == []
