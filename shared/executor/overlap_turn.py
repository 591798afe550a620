"""The overlap policy at an occurrence's first attempt, and the release of its waiter at its end: the I/O shell of
jobstate/overlap.py (docs/decisions.md, "Overlap, limits, long-running completion, spread").

At the first attempt of an occurrence's main action (attempts.py, after the job's and collection's checks, before
the action), a job whose policy is not Allow, or an occurrence whose request overrides the policy with Skip or
BufferOne (`jobstate.overlap.tracked`), has its marker written under the job's ETag (`overlap_marker.begin`):
- RUN: the attempt runs with the job as written (so the recorder's write finds its ETag current);
- SKIP: its ledger entry says SkippedByOverlap (not_run.py) and its claim is done: it never runs;
- BUFFER: its ledger entry says Waiting (WaitingForPrevious) the first time it waits, its claim is released and
  its message is queued again for when its place lapses (the running one's marker), carrying when it first came
  (`first_due`): the end of the running occurrence normally releases it long before (`released_message`, sent by
  the recorder right after the write that ended the running one), so that copy is only the fallback for a lost
  release; it dies at its claim once the occurrence ran.
Any other occurrence of an Allow job (the default) and every later attempt cost nothing here: the job is
returned as it was read.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..clock import Clock
from ..jobstate import marker_until, skipped_by_overlap, waiting
from ..jobstate.overlap import Turn, effective_policy, tracked
from ..model import JobHistoryActionName, WaitCause
from ..occurrence import OccurrenceMessage
from ..records import JobRecord, OccurrenceRef
from ..store import Claim, Store
from ..telemetry import occurrence_skipped
from . import overlap_marker
from .not_run import record_overlap_entry

log = logging.getLogger(__name__)

Blocking = Callable[..., Awaitable[Any]]


def first_attempt(message: OccurrenceMessage) -> bool:
    """The attempt that starts its occurrence: the main action's first, not a poll of it."""
    return message.action == JobHistoryActionName.MAIN_ACTION and message.attempt == 0 and message.poll is None


def ref_of(message: OccurrenceMessage) -> OccurrenceRef:
    return OccurrenceRef(
        message.execution_id, message.occurrence, message.trigger.value, message.generation, message.overlap
    )


class OverlapTurn:
    def __init__(self, store: Store, clock: Clock, io: Blocking) -> None:
        self.store = store
        self.clock = clock
        self.io = io

    async def begin(self, job: JobRecord, message: OccurrenceMessage, claim: Claim) -> JobRecord | None:
        """The job to run the attempt with, or None when the occurrence does not run now (skipped, or waiting):
        its ledger entry, claim and message are then taken care of."""
        if not first_attempt(message) or not tracked(job, message.overlap):
            return job
        result: JobRecord | None = await self.io(self._begin, job, message, claim)
        return result

    def _begin(self, job: JobRecord, message: OccurrenceMessage, claim: Claim) -> JobRecord | None:
        now = self.clock.now()
        until = marker_until(message.due, self.store.timings.running_lease)
        decision, written = overlap_marker.begin(self.store.jobs, message.job, ref_of(message), now, until, job)
        current = written or job
        if decision.turn == Turn.RUN:
            return current
        marker = current.overlap
        if decision.turn == Turn.SKIP:
            before = marker.running[0].ref if marker.running else (marker.waiting.ref if marker.waiting else None)
            policy = effective_policy(current, message.overlap)
            entry = skipped_by_overlap(current, message.occurrence, message.trigger, policy, before, now)
            record_overlap_entry(self.store, entry, message)
            self.store.claims.complete(claim)
            occurrence_skipped(message, "overlap")
            log.info("occurrence %s skipped: an earlier one of its job still runs (%s)", message.claim_id, policy.value)
            return None
        assert marker.waiting is not None, "a buffered occurrence is the marker's waiting one"
        if message.first_due is None:  # the first time it waits: a Waiting entry (its first attempt's replaces it)
            entry = waiting(current, message.occurrence, message.trigger, WaitCause.PREVIOUS, now)
            record_overlap_entry(self.store, entry, message)
        self.store.claims.release(claim)
        fallback = message.waiting(marker.waiting.until, WaitCause.PREVIOUS)
        self.store.queue.send(fallback, now)
        log.info("occurrence %s waits for the previous one of its job (BufferOne)", message.claim_id)
        return None
