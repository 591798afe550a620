"""What a collection's jobs do after the collection changed state: queued work, done after the API answered.

POST enable and disable, a PUT or PATCH that moves a collection between Enabled and Disabled, and DELETE
answer once the collection's own row says so and the work for its jobs is queued: a few storage round
trips, whatever the collection holds. That work is a `CascadeTask` on the dispatch queue (which the
app polls anyway), which the dispatch queue's trigger (shared/dispatch_trigger.py) hands to `run_task` one page of
PAGE jobs at a time, each page queueing the task for the next (the page's jobs written together, writes.py
`store_moves`; a job changed since the page's read moved alone, on a share of the runtime's cascade lane):

- Disabled: every Enabled job becomes Disabled; Enabled: every Disabled job becomes Enabled, re-planned
  from then (shared/jobstate `COLLECTION_CASCADE`, as before, only later);
- Deleted: every job is purged (purge.py), then the collection's row goes.

A task whose collection has since moved to another state stops: that move queued its own. Every step is
idempotent (a page reads only the jobs still in the old state, or still there), so a page repeated after a crash
or a duplicate task changes nothing. Until a task reaches them, the collection's jobs keep their old state in
storage (a GET may show it for a few seconds), but nothing of a collection that is not Enabled runs: the executor
reads the collection's state at each occurrence's second (shared/executor/collection_gate.py). A collection being
deleted is not found by the API; a PUT that creates it again first finishes the delete (`finish_delete`).

A host that dies mid-page does not leave the jobs' state stale for the trigger's ten-minute receive visibility.
Each task is sent after a hidden copy of it, its watchdog, which it names (store/queues.py `send_kept`);
the page's handler takes the watchdog over, renews it while the page runs and the next page is queued, and then
deletes it (shared/leases.py `TaskWatchdogs`). After a death, the copy turns visible `task_watchdog_after` later
and a live host runs the page again. The task the dead host held still comes back when its receive runs out, and
runs its page once more: the cascade is done by then and it finds nothing left to move, or it moves what a page of
the cascade would, and both chains end at the last page. (A job whose own state was changed against its
collection's meanwhile, say one job disabled in an Enabled collection, is moved back by that late page, as by a
cascade queued then.)
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .. import jobstate
from ..keys import CollectionKey
from ..model import JobCollectionState
from ..records import CollectionRecord, JobRecord
from ..store.dead_letters import DeadLetters
from ..store.queues import named_watchdog
from ..threads import CASCADE
from .purge import purge_job
from .states import set_collection_state, set_job_state
from .writes import store_moves

if TYPE_CHECKING:
    from ..runtime import Runtime

log = logging.getLogger(__name__)
PAGE = 100  # jobs per task: one task's work stays far inside the trigger's visibility timeout


@dataclass(frozen=True)
class CascadeTask:
    key: CollectionKey
    state: JobCollectionState  # Enabled, Disabled or Deleted
    after: str | None = None  # the page cursor (Enabled / Disabled)
    watchdog: tuple[str, str] | None = field(default=None, compare=False)  # (message id, pop receipt)

    def to_json(self) -> str:
        return json.dumps(
            {
                "cascade": self.state.value,
                "collection": [self.key.subscription, self.key.resource_group, self.key.collection],
                "after": self.after,
            }
            | ({"w": list(self.watchdog)} if self.watchdog else {}),
            separators=(",", ":"),
        )

    def with_watchdog(self, watchdog: tuple[str, str] | None) -> CascadeTask:
        return replace(self, watchdog=watchdog)

    def __str__(self) -> str:
        return f"cascade of collection {self.key.collection} to {self.state.value}" + (
            f" after {self.after}" if self.after else ""
        )

    @classmethod
    def from_json(cls, text: str) -> CascadeTask | None:
        """The task in a dispatch-queue message, or None for any other message (a dispatch task)."""
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict) or "cascade" not in data:
            return None
        subscription, group, name = data["collection"]
        key = CollectionKey(subscription, group, name)
        return cls(key, JobCollectionState(data["cascade"]), data.get("after"), named_watchdog(data.get("w")))


def queue_cascade(rt: Runtime, key: CollectionKey, state: JobCollectionState, after: str | None = None) -> None:
    """Queue the work that carries `state` to the collection's jobs (nothing for a state without any), after its
    watchdog."""
    if state in jobstate.COLLECTION_CASCADE or state == JobCollectionState.DELETED:
        rt.store.dispatch.send_kept(CascadeTask(key, state, after))


def run_task(rt: Runtime, task: CascadeTask) -> None:
    """One page of a cascade, then the task for the next page, if any, under the task's watchdog. Raises on storage
    faults (the trigger delivers the message again)."""
    record = rt.store.collections.get(task.key)
    if record is None or record.state != task.state:
        rt.dispatcher.watchdogs.drop(task)
        return  # gone, or moved on: the move that followed queued its own work
    with rt.dispatcher.watchdogs.watching(task):  # until the next page is queued: a death runs this page again
        _run_page(rt, record, task)


def _run_page(rt: Runtime, record: CollectionRecord, task: CascadeTask) -> None:
    log.info("collection %s: a page of its %s cascade", record.key.collection, task.state.value)
    if task.state == JobCollectionState.DELETED:
        if not _purge_page(rt, record):
            queue_cascade(rt, record.key, task.state)
        return
    from_state, to_state = jobstate.COLLECTION_CASCADE[task.state]
    jobs, after = rt.store.jobs.page_after(record.key, from_state, PAGE, task.after)
    now = rt.clock.now()
    moves = [(job, moved) for job in jobs if (moved := jobstate.moved(job, from_state, to_state, now)) is not None]
    left = store_moves(rt, moves, now)  # the page's rows in one transaction; a job changed since its read, alone:
    list(rt.threads.share(CASCADE).map(lambda job: set_job_state(rt, job, from_state, to_state, now), left))
    if after is not None:
        queue_cascade(rt, record.key, task.state, after)
    log.info("collection %s: %d job(s) %s", record.key.collection, len(jobs), to_state.value.lower())


def _purge_page(rt: Runtime, record: CollectionRecord) -> bool:
    """Purge a page of a Deleted collection's jobs; True when none was left and the collection went too."""
    jobs, after = rt.store.jobs.page_after(record.key, None, PAGE, None)

    def purge(job: JobRecord) -> None:
        purge_job(rt.store, job.key, due=job.next_execution_time, count=False, letters=False)

    list(rt.threads.share(CASCADE).map(purge, jobs))
    if jobs and after is not None:
        return False
    # What could not be read by key (a damaged row) goes with its partition; then the collection itself.
    rt.store.jobs.delete_rows_of(record.key)
    DeadLetters(rt.store.history.table_for(record.key)).delete_all(record.key)  # the jobs' purge left them
    rt.store.collections.delete(record.key)
    return True


def delete_collection(rt: Runtime, key: CollectionKey) -> None:
    """DELETE collection: mark it Deleted (nothing of it runs or is found any more) and queue its purge."""
    record = set_collection_state(rt, key, JobCollectionState.DELETED)
    queue_cascade(rt, record.key, JobCollectionState.DELETED)


def finish_delete(rt: Runtime, record: CollectionRecord) -> None:
    """Finish a queued delete here and now (a PUT that creates the collection again cannot wait for it)."""
    while not _purge_page(rt, record):
        pass


def transition_collection(rt: Runtime, key: CollectionKey, state: JobCollectionState) -> None:
    """POST enable / disable: the collection's state, then its jobs' work queued. The work is queued even when
    the collection already had the state: a failure may have kept the earlier one from being queued."""
    record = set_collection_state(rt, key, state)
    queue_cascade(rt, record.key, state)
