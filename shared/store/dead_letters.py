"""A collection's dead letters: occurrences whose run ended failed for good (jobstate/dead_letter.py says when),
kept beside their history to be shown, replayed and purged.

Rows: in the History table, in the collection's partition (history.py), under a row-key prefix of their own,
`~DL|`, then `{DateTime.MaxValue.Ticks - occurrence ticks:020}-{12 hex digits of the execution id's hash}` (the
dead letter's id: newest occurrence first, one row per occurrence identity). No job's rows can take that prefix:
an escaped job name (keys.py) has `~` only before two or more upper-case hex digits, and `L` is none. So the list is
one row-key range of the partition, and the recorder writes a dead letter in the same entity-group transaction as
the attempt that ended its run (history.py `add_group`, `beside`): a crash cannot keep one without the other.

A row holds the occurrence's identity (job, occurrence instant, trigger, execution id), the job's generation it
ran under, its state (DeadLettered, Replaying, Resolved), the last attempt of its latest run (action, status, the
target's answer as history keeps it, retry count, start and end), and its replays (how many, when the latest was
asked for). Nothing secret: what history holds, no more. The attempts themselves stay history rows
(`HistoryStore.attempts_of`).

Replay (`mark_replaying`): the row is replaced under its ETag (state Replaying, count + 1) before the replay is
queued, so of two replays asked for at once, one wins; a Replaying row refuses another replay for
`REPLAY_LEASE` after it was asked for (a replay whose message was lost, or that admission dropped, is then
replayable again). The recorder's write at the replay's end makes it DeadLettered (with its new outcome) or
Resolved again.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from ..keys import CollectionKey, JobKey, fold_case
from ..model import JobExecutionStatus, JobHistoryActionName
from ..occurrence import OccurrenceMessage, Trigger
from ..records import HistoryRecord
from .keys import job_partition
from .ledger import ticks
from .tables import ConcurrencyError, Entity, Table, as_datetime, as_int, chunks, int64
from .transaction import MAX_OPERATIONS

PREFIX = "~DL|"
END = "~DL}"  # the first key after every dead letter
REPLAY_LEASE = timedelta(hours=1)  # a Replaying dead letter refuses another replay this long after it was asked for
_MAX_TICKS = 3155378975999999999  # DateTime.MaxValue.Ticks


class DeadLetterState(str, Enum):
    DEAD_LETTERED = "DeadLettered"  # its latest run ended failed for good
    REPLAYING = "Replaying"  # a replay was queued and has not ended
    RESOLVED = "Resolved"  # its latest replay succeeded (or its error action did)


@dataclass(frozen=True)
class DeadLetter:
    collection: CollectionKey
    dead_letter_id: str
    job: str  # the job's name as its attempts named it
    execution_id: str
    occurrence: datetime
    trigger: str  # occurrence.Trigger's value
    generation: int
    state: DeadLetterState
    action: JobHistoryActionName  # of the last attempt of its latest run
    status: JobExecutionStatus
    message: str
    retry_count: int
    start_time: datetime | None
    end_time: datetime | None
    replay_count: int = 0
    replayed_at: datetime | None = None
    etag: str = ""

    @property
    def job_key(self) -> JobKey:
        c = self.collection
        return JobKey(c.subscription, c.resource_group, c.collection, self.job)

    def in_flight(self, now: datetime) -> bool:
        """A replay of it is queued and has not ended (nor been lost for REPLAY_LEASE)."""
        return (
            self.state == DeadLetterState.REPLAYING
            and self.replayed_at is not None
            and now < self.replayed_at + REPLAY_LEASE
        )

    def replay_message(self, generation: int, now: datetime) -> OccurrenceMessage:
        """The message of the replay it was marked for (`mark_replaying`): the occurrence's identity, the job's
        current definition, a first attempt of the main action due now, a claim id of its own (`replay`)."""
        return OccurrenceMessage(
            job=self.job_key,
            occurrence=self.occurrence,
            due=now,
            trigger=Trigger(self.trigger),
            generation=generation,
            replay=self.replay_count,
            replayed_at=self.replayed_at or now,
        )


def dead_letter_id(occurrence: datetime, execution_id: str) -> str:
    return f"{_MAX_TICKS - ticks(occurrence):020d}-{hashlib.sha1(execution_id.encode()).hexdigest()[:12]}"


def row(message: OccurrenceMessage, history: HistoryRecord, state: DeadLetterState) -> Entity:
    """The dead letter an attempt that ended its occurrence's run leaves (recorder.py), in its collection's
    partition: written beside the attempt's history row."""
    return {
        "PartitionKey": job_partition(message.job.collection_key),
        "RowKey": PREFIX + dead_letter_id(message.occurrence, message.execution_id),
        "Job": message.job.job,
        "ExecutionId": message.execution_id,
        "Occurrence": message.occurrence,
        "Trigger": message.trigger.value,
        "Generation": int64(message.generation),  # a definition's generation outgrows Int32
        "State": state.value,
        "Action": history.action_name.value,
        "Status": history.status.value,
        "Message": history.message,
        "RetryCount": history.retry_count,
        "StartTime": history.start_time,
        "EndTime": history.end_time,
        "ReplayCount": message.replay,
        "ReplayedAt": message.replayed_at,
    }


def entity(letter: DeadLetter) -> Entity:
    c = letter.collection
    key = JobKey(c.subscription, c.resource_group, c.collection, letter.job)
    history = HistoryRecord(
        key=key,
        execution_id=letter.execution_id,
        expected_execution_time=letter.occurrence,
        start_time=letter.start_time or letter.occurrence,
        end_time=letter.end_time or letter.occurrence,
        action_name=letter.action,
        status=letter.status,
        message=letter.message,
        retry_count=letter.retry_count,
    )
    message = OccurrenceMessage(
        job=key,
        occurrence=letter.occurrence,
        due=letter.occurrence,
        trigger=Trigger(letter.trigger),
        generation=letter.generation,
        replay=letter.replay_count,
        replayed_at=letter.replayed_at,
    )
    return row(message, history, letter.state) | {"RowKey": PREFIX + letter.dead_letter_id}


def read(collection: CollectionKey, e: Entity) -> DeadLetter:
    occurrence = as_datetime(e.get("Occurrence"))
    if occurrence is None:
        raise ValueError("a dead letter without its occurrence")
    return DeadLetter(
        collection=collection,
        dead_letter_id=str(e["RowKey"]).removeprefix(PREFIX),
        job=str(e["Job"]),
        execution_id=str(e.get("ExecutionId", "")),
        occurrence=occurrence,
        trigger=str(e.get("Trigger") or "schedule"),
        generation=as_int(e.get("Generation")),
        state=DeadLetterState(e.get("State") or DeadLetterState.DEAD_LETTERED.value),
        action=JobHistoryActionName(e.get("Action") or JobHistoryActionName.MAIN_ACTION.value),
        status=JobExecutionStatus(e.get("Status") or JobExecutionStatus.FAILED.value),
        message=str(e.get("Message") or ""),
        retry_count=int(e.get("RetryCount") or 0),
        start_time=as_datetime(e.get("StartTime")),
        end_time=as_datetime(e.get("EndTime")),
        replay_count=int(e.get("ReplayCount") or 0),
        replayed_at=as_datetime(e.get("ReplayedAt")),
        etag=str(e.get("etag") or ""),
    )


class DeadLetters:
    """The dead letters of the collections whose History table is `table` (HistoryStore.table_for)."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def page(self, collection: CollectionKey, size: int, continuation: Any = None) -> tuple[list[DeadLetter], Any]:
        """Newest occurrence first."""
        query = "PartitionKey eq @pk and RowKey ge @low and RowKey lt @high"
        params = {"pk": job_partition(collection), "low": PREFIX, "high": END}
        entities, token = self.table.page(query, params, size, continuation)
        return [read(collection, e) for e in entities], token

    def get(self, collection: CollectionKey, dead_letter_id: str) -> DeadLetter | None:
        if not _well_formed(dead_letter_id):
            return None
        found = self.table.get(job_partition(collection), PREFIX + dead_letter_id)
        return read(collection, found) if found is not None else None

    def mark_replaying(self, letter: DeadLetter, now: datetime) -> DeadLetter:
        """The dead letter Replaying, its replay counted, under the ETag it was read with (ConcurrencyError when it
        changed meanwhile: another replay, the recorder, a purge)."""
        marked = replace(letter, state=DeadLetterState.REPLAYING, replay_count=letter.replay_count + 1, replayed_at=now)
        return replace(marked, etag=self.table.replace(entity(marked), letter.etag))

    def restore(self, before: DeadLetter, marked: DeadLetter) -> None:
        """Undo `mark_replaying` (its replay was not queued), unless the row changed since."""
        self.table.replace(entity(before), marked.etag)

    def delete(self, letter: DeadLetter) -> bool:
        """Purge one, under its ETag (False when it changed or vanished meanwhile)."""
        return self.table.delete(job_partition(letter.collection), PREFIX + letter.dead_letter_id, letter.etag)

    def each(self, collection: CollectionKey) -> Iterator[DeadLetter]:
        query = "PartitionKey eq @pk and RowKey ge @low and RowKey lt @high"
        params = {"pk": job_partition(collection), "low": PREFIX, "high": END}
        for e in self.table.query(query, params):
            yield read(collection, e)

    def delete_all(self, collection: CollectionKey, job: str | None = None) -> int:
        """Every dead letter of the collection, or of its job named `job` (names ignore case), whatever its state:
        what the delete of the job or the collection takes with it (a job created again under the name must not
        find them). How many."""
        partition = job_partition(collection)
        doomed = [
            PREFIX + letter.dead_letter_id
            for letter in self.each(collection)
            if job is None or fold_case(letter.job) == fold_case(job)
        ]
        for batch in chunks(doomed, MAX_OPERATIONS):
            self.table.delete_batch(partition, batch)
        return len(doomed)

    def prune(self, collection: CollectionKey, max_age: timedelta, now: datetime) -> int:
        """Delete the dead letters whose latest run ended more than `max_age` ago (none in flight); how many."""
        doomed = [
            letter
            for letter in self.each(collection)
            if letter.end_time is not None and now - letter.end_time > max_age and not letter.in_flight(now)
        ]
        deleted = 0
        for letter in doomed:
            with contextlib.suppress(ConcurrencyError):  # replayed or rewritten meanwhile: not stale any more
                deleted += self.delete(letter)
        return deleted


def _well_formed(dead_letter_id: str) -> bool:
    digits, _, digest = dead_letter_id.partition("-")
    return len(digits) == 20 and digits.isascii() and digits.isdigit() and len(digest) == 12 and digest.isalnum()
