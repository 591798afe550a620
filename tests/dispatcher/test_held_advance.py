"""A dispatch task holds back the advance of a job whose running occurrence is about to be recorded
(`jobstate.recorded_by`, timings `advance_settle`): its executor read the job up to `early_hop` before the occurrence's
second, and the recorder writes under that read's ETag, so an advance landing in between would refuse
the recorder's whole transaction of the collection's jobs. The task queues every occurrence at once, advances the
other jobs at once, and advances the held one `advance_settle` after its fire instant, from a fresh read that keeps
the recorder's write. On the memory store and a clock the test moves (shared/manual_clock.py)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from datetime import datetime, timedelta

from shared.dispatch_trigger import handle_dispatch_message_async
from shared.dispatcher import DispatchOutcome, TickReport
from shared.jobstate import recorded_by
from shared.keys import JobKey
from shared.manual_clock import ManualClock
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.store import bucket_of
from shared.store.queues import ShardTask
from shared.threads import DISPATCH_TASK, LANES
from tests.support.manual_time import START, manual_clock, manual_runtime, step_until, until  # noqa: F401 (the fixtures `clock` and `rt`)
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection

SOON, LATER = START.replace(minute=2, second=5), START.replace(minute=2, second=40)  # their first occurrences
ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


def _create(rt: Runtime, *jobs: tuple[str, datetime], intervals: list[int] | None = None) -> None:
    """A collection of jobs every minute (or every `intervals[i]` minutes), each first due at its instant."""
    make_collection(rt, "P20Premium")
    for i, (name, first) in enumerate(jobs):
        recurrence = {"frequency": "Minute", "interval": intervals[i] if intervals else 1}
        body = {"properties": {"startTime": first.isoformat(), "recurrence": recurrence, "action": ACTION}}
        assert call(rt, "Jobs_CreateOrUpdate", "PUT", name, body).status == 201


def about_to_fire(rt: Runtime, clock: ManualClock) -> ShardTask:
    """Job `soon` created and its first occurrence dispatched by a tick in process, the clock 3 s before it fires:
    the task of the minute ahead that holds its next entry (its advance will wait)."""
    _create(rt, ("soon", SOON))
    clock.advance_to(START.replace(minute=1, second=0))
    rt.dispatcher.tick()
    clock.advance_to(SOON - timedelta(seconds=3))
    ahead = bucket_of(SOON + timedelta(minutes=1))
    (shard,) = [s for s in range(rt.settings.due_shards) if rt.store.due.entries(ahead, s)]
    return ShardTask(ahead, shard)


def _key(name: str) -> JobKey:
    return JobKey(SUB, RG, JC, name)


def _job(rt: Runtime, name: str) -> JobRecord:
    job = rt.store.jobs.get(_key(name))
    assert job is not None
    return job


def test_the_advance_of_a_job_about_to_be_recorded_waits_for_the_record_and_keeps_it(
    rt: Runtime, clock: ManualClock
) -> None:
    _create(rt, ("soon", SOON), ("later", LATER))
    clock.advance_to(START.replace(minute=1, second=0))
    rt.dispatcher.tick()  # in process: the first occurrences queued, the jobs advanced at once
    assert _job(rt, "soon").dispatched_occurrence == SOON and _job(rt, "later").dispatched_occurrence == LATER
    # The minute ahead's task, 3 s before `soon` fires: its executor holds the job as read already.
    clock.advance_to(SOON - timedelta(seconds=3))
    as_read = _job(rt, "soon")
    reports: list[TickReport] = []
    ahead = bucket_of(SOON + timedelta(minutes=1))  # the minute ahead: both jobs' next occurrences

    def task(shard: int) -> None:  # each shard's task of the minute ahead, as the queue trigger runs them
        reports.append(rt.dispatcher.run_task(ShardTask(ahead, shard)))

    tasks = [threading.Thread(target=task, args=(s,), daemon=True) for s in range(rt.settings.due_shards)]
    for thread in tasks:
        thread.start()
    assert until(lambda: _job(rt, "later").dispatched_occurrence == LATER + timedelta(minutes=1))
    assert until(lambda: rt.store.due.entries(ahead) != [] and len(rt.store.due.entries(ahead)) == 1)
    assert _job(rt, "soon").dispatched_occurrence == SOON and any(t.is_alive() for t in tasks)  # held
    # Meanwhile the recorder writes `soon`'s status under the ETag its executor read: not refused.
    recorded = rt.store.jobs.replace(replace(as_read, execution_count=1))
    step_until(clock, lambda: not any(t.is_alive() for t in tasks), step=0.25)
    assert clock.now() >= SOON + rt.store.timings.advance_settle  # not before the record was due in
    advanced = _job(rt, "soon")
    assert advanced.dispatched_occurrence == SOON + timedelta(minutes=1)
    assert advanced.next_execution_time == SOON + timedelta(minutes=2)
    assert advanced.execution_count == recorded.execution_count == 1  # the advance read the record first
    assert sum(report.of(DispatchOutcome.QUEUED) for report in reports) == 2  # each counted once
    assert rt.store.due.entries(ahead) == []


def test_tasks_waiting_for_their_held_advances_leave_the_dispatch_task_threads_to_others(
    rt: Runtime, clock: ManualClock
) -> None:
    # One more held task than the lane has threads: jobs every k minutes, k = 1..n, so that each job's next
    # occurrence is in a minute of its own, dispatched by a task of its own, each holding its job's advance.
    n = LANES[DISPATCH_TASK].size + 1
    names = [f"every-{k}" for k in range(1, n + 1)]
    _create(rt, *[(name, SOON) for name in names], intervals=list(range(1, n + 1)))
    clock.advance_to(START.replace(minute=1, second=0))
    rt.dispatcher.tick()
    clock.advance_to(SOON - timedelta(seconds=3))
    buckets = [bucket_of(SOON + timedelta(minutes=k)) for k in range(1, n + 1)]
    texts = [ShardTask(bucket, shard).to_json() for bucket in buckets for shard in range(rt.settings.due_shards)]

    async def trigger() -> None:  # the host runs the messages' triggers together on its event loop
        await asyncio.gather(*(handle_dispatch_message_async(rt, text) for text in texts))

    host = threading.Thread(target=asyncio.run, args=(trigger(),), daemon=True)
    host.start()

    def following_written(k: int) -> bool:  # the task's work before its wait: the next entry after the one it took
        after = SOON + timedelta(minutes=2 * k)
        return any(e.job == _key(f"every-{k}") and e.due == after for e in rt.store.due.entries(bucket_of(after)))

    # Every task did its work while the clock stood still: none waited for a thread another one's wait held.
    all_worked = until(lambda: all(following_written(k) for k in range(1, n + 1)))
    all_held = host.is_alive() and all(_job(rt, name).dispatched_occurrence == SOON for name in names)
    step_until(clock, lambda: not host.is_alive(), step=0.25)  # the waits end, whatever the tasks did
    assert all_worked and all_held
    assert clock.now() >= SOON + rt.store.timings.advance_settle
    for k, (name, bucket) in enumerate(zip(names, buckets, strict=True), start=1):
        assert _job(rt, name).dispatched_occurrence == SOON + timedelta(minutes=k)  # advanced after the wait
        assert all(e.job != _key(name) for e in rt.store.due.entries(bucket))  # and the entry it took removed


def test_a_task_cancelled_while_it_waits_leaves_its_watchdog_to_bring_it_back(rt: Runtime, clock: ManualClock) -> None:
    task = about_to_fire(rt, clock)
    text = task.to_json()
    loop = asyncio.new_event_loop()
    trigger = loop.create_task(handle_dispatch_message_async(rt, text))
    host = threading.Thread(target=loop.run_until_complete, args=(asyncio.wait([trigger]),), daemon=True)
    host.start()
    assert until(lambda: rt.store.due.entries(bucket_of(SOON + timedelta(minutes=2))) != [])  # waiting
    loop.call_soon_threadsafe(trigger.cancel)  # the process is going away
    host.join(5)
    assert trigger.cancelled() and _job(rt, "soon").dispatched_occurrence == SOON  # not advanced
    queue = rt.store.dispatch.client

    def came_back() -> bool:  # its watchdog, no longer renewed, turns visible
        return any(ShardTask.from_json(m.content) == task for m in queue.peek_messages(32))

    step_until(clock, came_back, step=0.5)
    assert clock.now() >= SOON - timedelta(seconds=3) + rt.store.timings.task_watchdog_after
    loop.close()


def test_an_advance_waits_from_the_lead_before_the_fire_instant_to_the_settle_after_it(rt: Runtime) -> None:
    _create(rt, ("soon", SOON))
    job = replace(_job(rt, "soon"), dispatched_occurrence=SOON)
    timings = rt.store.timings
    lead = timings.early_hop  # as the dispatcher asks: 8 s
    for seconds, held in [(-8.1, False), (-7.9, True), (0.0, True), (1.9, True), (2.0, False), (30.0, False)]:
        answer = recorded_by(job, SOON + timedelta(seconds=seconds), lead, timings.advance_settle)
        assert answer == (SOON + timings.advance_settle if held else None), seconds
    assert recorded_by(replace(job, dispatched_occurrence=None), SOON, lead, timings.advance_settle) is None
    assert recorded_by(job, SOON, lead, timedelta(0)) is None  # 0: advances never wait
