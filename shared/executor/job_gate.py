"""Is the job still the one an occurrence was queued for, at the second the occurrence fires?

A batch reads its jobs when it is received, up to `early_visibility` (5 s) before its second (batch.py). For the
dispatcher's occurrences that read is the job's check: a herd's cost is paid before its second, and a change
landing in those seconds lets that one occurrence run (docs/execution.md). Every other attempt (`rechecked`) is
read again at its own second: a backfill's occurrences (five to a message, one second apart, so its batch's
read is four seconds old at the last), a run-now, a retry, an error action. A delete, a disable or a
redefinition answered before that second drops the attempt (attempts.py), as `jobs_of` drops one whose batch
was read after it. A poll is not: its action went out, and its attempt is recorded as the poll finds it.

The jobs of one collection asked for within `job_gather` (the settings' timing, shared/timings.py) share one read
(a query per 14, gathered.py), so a herd of retries costs a request per 14 of them. A read that fails fails its
askers before their actions (the host delivers their batches again).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..clock import Clock
from ..keys import CollectionKey, JobKey
from ..model import JobHistoryActionName
from ..occurrence import OccurrenceMessage, Trigger
from ..records import JobRecord
from ..store import Store
from ..store.jobs import MANY_MIN
from ..telemetry import occurrence_skipped
from .gathered import Gathered
from .not_run import record_superseded

log = logging.getLogger(__name__)


def rechecked(message: OccurrenceMessage) -> bool:
    """The attempt's job is read again at its second: all but a scheduled occurrence's first attempt (and polls)."""
    if message.poll is not None:
        return False
    first = message.action == JobHistoryActionName.MAIN_ACTION and message.attempt == 0
    return not (first and message.trigger == Trigger.SCHEDULE)


class JobGate:
    def __init__(self, store: Store, clock: Clock, io: Callable[..., Awaitable[Any]]) -> None:
        self.store = store
        self.clock = clock
        self.io = io
        # An attempt at its second waits this long for the others of its collection to ask too.
        window = store.timings.job_gather.total_seconds()
        self._reads: Gathered[CollectionKey, JobKey, JobRecord | None] = Gathered(io, self._read_together, window)

    async def current(self, message: OccurrenceMessage) -> JobRecord | None:
        """The attempt's job as stored now, or None when it was deleted or redefined (a disable and an enable
        too: each writes a new generation) after the attempt was queued: the attempt is dropped, and named in
        the ledger where the job is left (not_run.py `record_superseded`, as `Attempts.jobs_of` does)."""
        current = await self._reads.ask(message.job.collection_key, message.job)
        if current is not None and current.generation == message.generation:
            return current
        log.info("occurrence %s: its job was deleted or redefined before its second; dropped", message.claim_id)
        occurrence_skipped(message, "job_changed")
        if current is not None:
            await self.io(record_superseded, self.store, [(current, message)], self.clock.now())
        return None

    def _read_together(self, collection: CollectionKey, keys: list[JobKey]) -> list[JobRecord | None]:
        wanted = list(dict.fromkeys(keys))
        found = self.store.jobs.get_many(collection, wanted) if len(wanted) >= MANY_MIN else {}
        for key in wanted:
            if key not in found:  # a single job, or one the query left out (unreadable: read alone, it raises)
                found[key] = self.store.jobs.get(key)
        return [found[key] for key in keys]
