"""A first occurrence the API plans before the dispatch horizon (shared/first_dispatch.py): due within seconds, the
API queues it; later, a dispatch task of its partition does, one task for the jobs created meanwhile, so they reach
the executor in one message a span instead of one each. Whoever removes a partition's waiting mark reads the
partition after, so no entry whose writer found the mark is left behind; a mark left without its task (a process
gone between the two) costs a tick's wait, and a task that cannot be sent is done by its writer."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any

from azure.core.exceptions import ServiceRequestError

from shared.dispatcher import Dispatcher, TickReport
from shared.health import overdue
from shared.keys import JobKey
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store import DueIndex, JobStore
from shared.store.queues import DispatchQueue, ShardTask
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain_dispatch, make_collection

HTTP_ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


def _runtime(settings: Settings, clock: ManualClock, storage: Any) -> Runtime:
    # One shard: a task per bucket. No gather: the task is visible at once (the memory queue keeps real seconds).
    timings = dataclasses.replace(settings.timings, first_gather=timedelta(0))
    rt = Runtime.create(dataclasses.replace(settings, due_shards=1, timings=timings), clock, storage=storage)
    make_collection(rt)
    return rt


def _create(rt: Runtime, name: str, due: datetime) -> None:
    body = {"properties": {"startTime": due.isoformat(), "action": HTTP_ACTION}}
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", name, body).status == 201


def _job(rt: Runtime, name: str) -> JobRecord:
    job = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
    assert job is not None
    return job


def _queued(rt: Runtime) -> tuple[int, int]:
    """(occurrence batches, dispatch tasks) on the queues, hidden ones included: a batch goes with its watchdog and
    backstop, three messages (store/queues.py)."""
    messages = rt.store.queue.client.get_queue_properties().approximate_message_count
    assert messages % 3 == 0, messages
    tasks = rt.store.dispatch.client.get_queue_properties().approximate_message_count
    return messages // 3, tasks


def test_jobs_created_for_the_minute_ahead_reach_the_executor_in_one_message(settings, clock, storage) -> None:
    rt = _runtime(settings, clock, storage)
    clock.current = clock.now().replace(second=30, microsecond=0)
    due = clock.now() + timedelta(seconds=40)  # the next minute: before the horizon, after first_inline_within
    for n in range(30):
        _create(rt, f"job{n}", due)
    assert _queued(rt) == (0, 1)  # one task for them all; nothing queued yet
    assert {_job(rt, f"job{n}").next_execution_time for n in range(30)} == {due}  # as stored, not advanced
    report = drain_dispatch(rt.dispatcher)
    assert (report.tasks, report.enqueued) == (1, 30)
    assert _queued(rt) == (1, 0)  # one message for the 30: the same second of one shard
    assert {_job(rt, f"job{n}").next_execution_time for n in range(30)} == {None}  # one-shot jobs, advanced past it
    assert rt.store.due.in_account(0).read(due.strftime("%Y%m%d%H%M"), 0) == ([], False)  # the mark is gone


def test_a_first_occurrence_due_within_seconds_is_queued_by_the_api(settings, clock, storage) -> None:
    rt = _runtime(settings, clock, storage)
    soon = clock.now().replace(microsecond=0) + rt.settings.timings.first_inline_within - timedelta(seconds=1)
    _create(rt, "soon", soon)
    assert _queued(rt) == (1, 0)
    assert _job(rt, "soon").next_execution_time is None  # advanced past its one occurrence by the API


class _WriterDuringUnmark(DueIndex):
    """The due index as a task finds it when a writer comes while the task removes the partition's mark: the
    writer's entry lands and finds the mark still there, so it sends no task of its own."""

    def __init__(self, inner: DueIndex, writer: Any) -> None:
        super().__init__(inner.table, inner.state, inner.shards, inner.account)
        self.writer = writer

    def unmark_waiting(self, partition: str) -> None:
        self.writer()
        super().unmark_waiting(partition)


def test_a_job_whose_writer_found_the_mark_is_read_by_the_task_that_removes_it(settings, clock, storage) -> None:
    rt = _runtime(settings, clock, storage)
    clock.current = clock.now().replace(second=30, microsecond=0)
    due = clock.now() + timedelta(seconds=40)
    _create(rt, "first", due)
    index = _WriterDuringUnmark(rt.store.due, lambda: _create(rt, "meanwhile", due + timedelta(seconds=1)))
    task = rt.store.dispatch.client.receive_messages(max_messages=1)[0]
    report = Dispatcher(dataclasses.replace(rt.store, due=index), clock).handle_task(task.content)
    rt.store.dispatch.client.delete_message(task)
    assert report.enqueued == 2  # the task read the partition again after the mark was gone
    assert _queued(rt) == (1, 0)  # and "meanwhile" sent no task: it relied on this one
    # A writer after the removal marks the partition anew and sends a task of its own.
    _create(rt, "after", due + timedelta(seconds=2))
    assert _queued(rt) == (1, 1)
    assert drain_dispatch(rt.dispatcher).enqueued == 1


def test_a_mark_left_without_its_task_is_removed_by_the_next_tick_which_dispatches_its_jobs(
    settings, clock, storage
) -> None:
    rt = _runtime(settings, clock, storage)
    clock.current = clock.now().replace(second=30, microsecond=0)
    due = clock.now() + timedelta(seconds=40)
    index = rt.store.due.for_job(JobKey(SUB, RG, JC, "stranded"))
    assert index.mark_waiting(index.partition(JobKey(SUB, RG, JC, "stranded"), due))  # its sender died after this
    _create(rt, "stranded", due)
    assert _queued(rt) == (0, 0)  # it found the mark and relied on a task that will never come
    clock.current = due + timedelta(minutes=2)
    assert overdue(rt.store, clock.now()).count == 1  # the entry, not the mark
    clock.current = due.replace(second=0)  # the next minute's tick, before the occurrence's second
    assert rt.dispatcher.tick().enqueued == 1  # re-read behind the watermark (dispatch_overlap)
    assert index.read(due.strftime("%Y%m%d%H%M"), 0) == ([], False)


class _Unsendable(DispatchQueue):
    def __init__(self, inner: DispatchQueue) -> None:
        self.__dict__.update(inner.__dict__)

    def send(self, task: ShardTask, guarded: bool = True, delay: float = 0.0) -> None:
        raise ServiceRequestError("storage unavailable")


def test_a_task_that_cannot_be_sent_is_done_by_its_writer(settings, clock, storage) -> None:
    rt = _runtime(settings, clock, storage)
    clock.current = clock.now().replace(second=30, microsecond=0)
    due = clock.now() + timedelta(seconds=40)
    store = dataclasses.replace(rt.store, dispatch=_Unsendable(rt.store.dispatch))
    failing = dataclasses.replace(rt, store=store, dispatcher=Dispatcher(store, clock))
    _create(failing, "unsent", due)
    assert _queued(rt) == (1, 0)  # queued by the writer, as the task would have
    assert _job(rt, "unsent").next_execution_time is None
    index = rt.store.due.for_job(JobKey(SUB, RG, JC, "unsent"))
    assert index.read(due.strftime("%Y%m%d%H%M"), 0) == ([], False)  # no mark left to hold later writers back


def test_a_task_reading_between_a_creates_entry_and_its_job_leaves_the_entry(settings, clock, storage) -> None:
    rt = _runtime(settings, clock, storage)
    clock.current = clock.now().replace(second=30, microsecond=0)
    due = clock.now() + timedelta(seconds=40)
    _create(rt, "first", due)  # marks the partition and sends its task
    ran: list[TickReport] = []

    class TaskBeforeTheJob(JobStore):
        """The job store as a create finds it when the partition's task runs between its entry and its job."""

        def insert(self, record: JobRecord) -> str:
            ran.append(drain_dispatch(rt.dispatcher))
            return super().insert(record)

    jobs = TaskBeforeTheJob.__new__(TaskBeforeTheJob)
    jobs.__dict__.update(rt.store.jobs.__dict__)
    store = dataclasses.replace(rt.store, jobs=jobs)
    _create(dataclasses.replace(rt, store=store, dispatcher=Dispatcher(store, clock)), "second", due)
    assert [(r.enqueued, r.raced, r.stale) for r in ran] == [(1, 1, 0)]  # "second"'s entry stayed, without its job
    assert drain_dispatch(rt.dispatcher).enqueued == 1  # "second" marked the partition anew: its own task
    assert _job(rt, "second").next_execution_time is None
