"""How a first occurrence the API plans before the dispatch horizon reaches the queue: the minute timer has sent (or is
sending) its partition's tasks already, so the tick would be late for it.

Due within `first_inline_within`: the API queues it right away (`Dispatcher.dispatch`), as before there was a
choice. Later: its due entry (written already, lifecycle/writes.py) is left to a dispatch task of its partition,
sent by the first writer that marks the partition waiting (`DueIndex.mark_waiting`) and visible `first_gather` after
its send, so the jobs of a bulk creation go to the executor together, a queue message per `batch_span` of a shard's
seconds, instead of one each with its own copies and job write (bench/near_term.py measures both ways in
CHANGELOG.md: one each made a bulk creation's executions minutes late). A writer that finds the mark sends nothing:
the task in flight reads the partition after it removes the mark, so it finds this writer's entry, written before.

Contract: every entry written before its writer marked (or found the mark on) its partition is read by a dispatch
task that starts later. A mark or a send that fails (the mark may stand without its task) makes the writer do the
task's work itself (`Dispatcher.run_task`). A process that dies between the mark and the send leaves the mark
standing: the partition's entries are dispatched by the next tick, which re-reads the buckets behind its watermark
(`dispatch_overlap`) and removes the mark (`DueIndex.to_dispatch`), up to a minute late. A task may read an entry
before its writer has written the job (the entry goes first): it leaves the entry (jobstate.awaits_its_write), and
the writer's mark, set after the job, brings a task that reads both.
"""

from __future__ import annotations

import logging
from datetime import datetime

from .dispatcher import Dispatcher
from .records import JobRecord
from .store import parse_partition
from .store.queues import ShardTask

log = logging.getLogger(__name__)


def dispatch_first(dispatcher: Dispatcher, job: JobRecord, due: datetime, now: datetime) -> JobRecord | None:
    """Queue the stored job's first occurrence at `due` (before the dispatch horizon): the job as advanced when the
    API queued it right away, else None (it stays as stored until its task advances it)."""
    timings = dispatcher.timings
    if due - now < timings.first_inline_within:
        return dispatcher.dispatch(job, due, now)
    store = dispatcher.store
    index = store.due.for_job(job.key)
    partition = index.partition(job.key, due)
    bucket, shard = parse_partition(partition)
    task = ShardTask(bucket, shard, account=index.account)
    try:
        if index.mark_waiting(partition):
            store.dispatch.send(task, guarded=False, delay=timings.first_gather.total_seconds())
    except Exception:
        log.warning("the dispatch task of %s could not be sent; dispatching it here", task, exc_info=True)
        dispatcher.run_task(task)
    return None
