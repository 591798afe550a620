"""The missed-run policy at a scheduled occurrence's first attempt: the I/O shell of jobstate/late.py.

An occurrence queued before the service went down (the dispatcher works a minute ahead) reaches its second late
on recovery. At its first attempt (attempts.py, after the job's and collection's checks, before its overlap turn
and its limits), one that came more than MISSED_AFTER late is decided by its job's missed-run policy as the
dispatcher decides the occurrences it finds missed (docs/decisions.md, "Missed runs, backfill, the ledger"):
- it runs: nothing here, the attempt goes on;
- it is let go: its ledger entry names the policy (SkippedByPolicy, or Postponed into the latest occurrence due,
  not_run.py), the job becomes Completed when that was its series' last occurrence (under its ETag: nothing else
  would complete it), and its claim is done, so a copy of the message dies at it.
An on-time attempt (every attempt while the service runs) costs no storage request here: the decision needs the
message, the job as the batch read it, and now.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from ..clock import Clock
from ..jobstate import LetGo, completed, let_go_late
from ..occurrence import OccurrenceMessage
from ..records import JobRecord
from ..store import Claim, Store, read_modify_write
from ..telemetry import occurrence_skipped
from .not_run import record_let_go

log = logging.getLogger(__name__)

Blocking = Callable[..., Awaitable[Any]]
# Lost races to complete the job before the attempt fails (the host delivers it again, and it is decided again).
_COMPLETE_ATTEMPTS = 5


class MissedTurn:
    def __init__(self, store: Store, clock: Clock, io: Blocking) -> None:
        self.store = store
        self.clock = clock
        self.io = io

    async def let_go(self, job: JobRecord, message: OccurrenceMessage, claim: Claim) -> bool:
        """True when the attempt's occurrence came missed and its job's missed-run policy does not run it: its
        ledger entry, its job and its claim are then taken care of."""
        now = self.clock.now()
        late = let_go_late(job, message, now)
        if late is None:
            return False
        await self.io(self._let_go, job, message, claim, late, now)
        return True

    def _let_go(self, job: JobRecord, message: OccurrenceMessage, claim: Claim, late: LetGo, now: datetime) -> None:
        record_let_go(self.store, job, message, late, now)
        if completed(job, message) is not None:  # its series' last: nothing else completes the job
            read_modify_write(
                lambda: self.store.jobs.get(job.key),
                lambda current: completed(current, message),
                lambda record, _: self.store.jobs.replace(record),
                attempts=_COMPLETE_ATTEMPTS,
                current=job,
            )
        self.store.claims.complete(claim)
        occurrence_skipped(message, "missed")
        log.info(
            "occurrence %s came %s late (missed): not run, its missed-run policy is %s",
            message.claim_id,
            now - message.due,
            late.policy.value,
        )
