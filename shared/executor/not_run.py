"""The ledger entries the executor writes for occurrences it does not run (jobstate/ledger.py says what they
hold): an occurrence queued for a definition since replaced, and one whose job or collection may not run it
when its second comes, and one its job's overlap policy skips or holds back, and one that came missed and its
job's missed-run policy lets go (each decided by admission.py). Only on those paths: an occurrence that
runs costs nothing here (its attempt writes its entry). Best effort: a storage fault here is logged, never a
reason to deliver the batch again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from ..jobstate import Attempt, LetGo, let_go_queued, marker_until, may_run, not_run, superseded
from ..jobstate.pause import collection_why
from ..model import JobCollectionState, JobPause, JobState, LedgerReason
from ..occurrence import OccurrenceMessage
from ..records import JobRecord, LedgerEntry
from ..store import Store
from . import overlap_marker
from .released import released_message, waiting_since

log = logging.getLogger(__name__)


def record_superseded(
    store: Store, dropped: Sequence[tuple[JobRecord, OccurrenceMessage]], now: datetime
) -> list[LedgerEntry]:
    """Each message was planned for an earlier generation of its job (as it is now), so it is dropped. Their
    ledger entries go in one write (a transaction per collection): after a disable or a redefinition every
    queued occurrence of those jobs comes here, in batches shared with other collections' occurrences, which
    a request per dropped occurrence would hold back. An occurrence its job's overlap marker still holds
    running ends here (else it would hold the job for `running_lease`): the marker lets it go and the occurrence
    waiting for it, if any, is queued at once. The entries written (or meant to be: a failed write is logged)."""
    entries = [
        entry
        for current, message in dropped
        if message.first_attempt and (entry := superseded(current, message.occurrence, message.trigger, now))
    ]
    _write(store, entries, "superseded")
    for current, message in dropped:
        _release_superseded(store, current, message, now)
    return entries


def _release_superseded(store: Store, current: JobRecord, message: OccurrenceMessage, now: datetime) -> None:
    if any(r.ref.execution_id == message.execution_id for r in current.overlap.running):
        try:
            since = waiting_since(current)
            until = marker_until(now, store.timings.running_lease)
            ended, _ = overlap_marker.end(store.jobs, current.key, message.execution_id, now, until, current)
            if ended.released is not None:
                store.queue.send(released_message(current.key, ended.released, since, now), now)
        except Exception:  # the marker lapses by itself: never worth running the batch again
            log.exception("the overlap marker of occurrence %s (superseded) was not released", message.claim_id)


def record_overlap_entry(store: Store, entry: LedgerEntry, message: OccurrenceMessage) -> None:
    """The ledger entry of an occurrence its job's overlap policy skipped (SkippedByOverlap) or holds back
    (Waiting, WaitingForPrevious)."""
    _write(store, [entry], message.claim_id)


def record_let_go(store: Store, job: JobRecord, message: OccurrenceMessage, late: LetGo, now: datetime) -> None:
    """The ledger entry of a queued occurrence that came missed and its job's missed-run policy let go (SkippedByPolicy,
    or Postponed into the latest occurrence due)."""
    _write(store, [let_go_queued(job, message.occurrence, late, now)], message.claim_id)


def record_not_run(
    store: Store,
    job: JobRecord,
    attempt: Attempt,
    message: OccurrenceMessage,
    now: datetime,
    collection: JobCollectionState | None,
) -> LedgerReason | None:
    """`message` may not run now: its job's state or its collection's (`collection`, as the executor read it at
    the occurrence's second) refused it. The reason of the entry written, None when there is none to write."""
    if not message.first_attempt:
        return None
    if not may_run(job, attempt):
        if job.state != JobState.DISABLED:
            return None  # a final job: its series ended, so no occurrence of it is let go
        reason = LedgerReason.JOB_DISABLED
    elif collection is None or collection == JobCollectionState.DELETED:
        return None  # its delete purges the job and its history (lifecycle/cascade.py): nothing to keep a note in
    else:
        reason = (
            LedgerReason.COLLECTION_SUSPENDED
            if collection == JobCollectionState.SUSPENDED
            else LedgerReason.COLLECTION_DISABLED
        )
    _write(store, [not_run(job, message.occurrence, message.trigger, reason, now)], message.claim_id)
    return reason


def record_paused(
    store: Store, job: JobRecord, message: OccurrenceMessage, pause: JobPause, now: datetime
) -> LedgerReason:
    """`message` is held by its collection's pause (jobstate.pause `collection_holds`): its ledger entry, Paused."""
    entry = replace(
        not_run(job, message.occurrence, message.trigger, LedgerReason.PAUSED, now), message=collection_why(pause)
    )
    _write(store, [entry], message.claim_id)
    return LedgerReason.PAUSED


def _write(store: Store, entries: list[LedgerEntry], what: str) -> None:
    """The entries in one write (a transaction per collection's partition)."""
    if not entries:
        return
    try:
        store.history.add_all([], entries)
    except Exception:  # the ledger entries record non-events: never worth running the batch again
        log.exception("the ledger entries of %d occurrence(s) not run (%s) were not written", len(entries), what)
