"""Backfill (POST .../jobs/{job}/backfill, newer api-version): run the nominal occurrences of a past interval.

Rules (docs/decisions.md, "Missed runs, backfill, the ledger"): every occurrence of the job's series at or after
`from` and before `to` (at most MAX_OCCURRENCES; `to` not later than now) runs once more, each with an identity
of its own (trigger Backfill: its execution id differs from the scheduled occurrence's), oldest first, one
second apart (BACKFILL_SPACING), under the job's policies (retry policy, error action; a Disabled or Suspended
collection runs nothing, and the ledger says so). Like run-now it counts as executions, not toward `count`,
leaves nextExecutionTime alone, and is refused (Conflict) for a Completed or Faulted job. History shows each
attempt; the ledger (newer-version history) one entry per backfilled occurrence, trigger Backfill.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from ..jobstate import FINAL_STATES, series_of
from ..keys import JobKey
from ..model import OverlapPolicy
from ..occurrence import OccurrenceBatch, OccurrenceMessage, Trigger
from ..store.tables import chunks
from .errors import Conflict, InvalidDefinition
from .reads import get_job, live_collection

if TYPE_CHECKING:
    from ..runtime import Runtime

MAX_OCCURRENCES = 1000
BACKFILL_SPACING = timedelta(seconds=1)
PER_MESSAGE = 5  # consecutive occurrences per queue message: a message's occurrences wait at most 4 s in a worker


@dataclass(frozen=True)
class Backfilled:
    occurrence: datetime
    fires: datetime
    execution_id: str


def backfill_job(
    rt: Runtime,
    key: JobKey,
    since: datetime,
    until: datetime,
    overlap: OverlapPolicy | None = None,
    *,
    what_if: bool = False,
) -> list[Backfilled]:
    """Queue the job's occurrences in [since, until); what was queued, oldest first. `overlap` overrides the job's
    overlap policy for them (nothing is stored). With `what_if`, every check is made and nothing is queued: what
    would be queued."""
    now = rt.clock.now()
    if since >= until:
        raise InvalidDefinition("from must be before to.", "from")
    if until > now:
        raise InvalidDefinition("to must not be later than now: a backfill runs past occurrences.", "to")
    live_collection(rt, key.collection_key)
    record = get_job(rt, key)
    if record.state in FINAL_STATES:
        raise Conflict(f"The job is {record.state.value}; a {record.state.value} job cannot be backfilled.")
    series = series_of(record)
    found: list[datetime] = []
    cursor = series.first_at_or_after(since) if series.recurring else series.first(since)
    while cursor is not None and cursor < until:
        if len(found) == MAX_OCCURRENCES:
            raise InvalidDefinition(
                f"The interval holds more than {MAX_OCCURRENCES} occurrences of the job; backfill it in parts.", "to"
            )
        if cursor >= since:
            found.append(cursor)
        cursor = series.following(cursor)
    messages = [
        OccurrenceMessage(
            record.key,
            occurrence,
            now + BACKFILL_SPACING * index,
            Trigger.BACKFILL,
            generation=record.generation,
            overlap=overlap,
        )
        for index, occurrence in enumerate(found)
    ]
    for part in chunks(messages, PER_MESSAGE) if not what_if else ():
        rt.store.queue.send(OccurrenceBatch(tuple(part)), now)
    return [Backfilled(m.occurrence, m.due, m.execution_id) for m in messages]
