"""Many jobs of one collection changed together, each under its ETag: the batched read-modify-write.

The dispatcher's advance and the recorder's status update each change many jobs of a collection at once, and
either may find some of them changed by the other since its read (an executor records an attempt of a job
the dispatcher is advancing, or the other way round). Writing those alone (a read and a write each) cost
more storage requests than the rest of an execution. Here a round writes the changed jobs in entity-group
transactions (`JobStore.replace_many`), reads the ones it could not write again together (`get_many`, a
query per 14), applies the change to what it read, and writes those in the next round; after ROUNDS rounds
what is left answers ConcurrencyError, for the caller's own single read-modify-write. A collection's cascade
(lifecycle/writes.py `store_moves`) writes its page in one round: its due entries were added for the instants of
its read, so a job changed since is moved alone.

`change(job)` returns the job to write, or None when nothing is to be written (then the answer is the job as
read); what it raises is that job's answer. Per item, in order: the job as written, the job as read when
there was nothing to write, None when it is gone, or the exception that stopped it; one job's failure never
stops the others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ..keys import CollectionKey, JobKey
from ..records import JobRecord
from .tables import ConcurrencyError, chunks
from .transaction import MAX_OPERATIONS

ROUNDS = 3

Change = Callable[[JobRecord], JobRecord | None]
Updated = JobRecord | None | BaseException


class ManyJobs(Protocol):
    def get_many(self, collection: CollectionKey, keys: list[JobKey]) -> dict[JobKey, JobRecord | None]: ...

    def replace_many(self, records: list[JobRecord]) -> list[JobRecord | None]: ...


def update_together(jobs: ManyJobs, items: Sequence[tuple[JobRecord, Change]], rounds: int = ROUNDS) -> list[Updated]:
    """Each job (as its caller read it, all of one collection) changed by its `change` and written back."""
    results: list[Updated] = [None] * len(items)
    current = {index: job for index, (job, _) in enumerate(items)}
    for round_ in range(rounds):
        writes: list[tuple[int, JobRecord]] = []
        for index, job in current.items():
            try:
                updated = items[index][1](job)
            except Exception as error:  # this job's answer; the others go on
                results[index] = error
                continue
            if updated is None:
                results[index] = job
            else:
                writes.append((index, updated))
        refused: list[int] = []
        for chunk in chunks(writes, MAX_OPERATIONS):
            for (index, _), stored in zip(chunk, jobs.replace_many([u for _, u in chunk]), strict=True):
                if stored is None:
                    refused.append(index)
                else:
                    results[index] = stored
        if not refused:
            return results
        if round_ == rounds - 1:
            for index in refused:
                results[index] = ConcurrencyError(f"job {items[index][0].key.resource_id} kept changing")
            return results
        fresh = jobs.get_many(items[0][0].key.collection_key, [items[index][0].key for index in refused])
        current = {}
        for index in refused:
            key = items[index][0].key
            if key not in fresh:  # unreadable in the query: left to the caller's own read, which raises
                results[index] = ConcurrencyError(f"job {key.resource_id} could not be read again")
                continue
            reread = fresh[key]
            if reread is None:
                results[index] = None  # gone meanwhile
            else:
                current[index] = reread
    return results
