"""The sharded due index and the fanned-out dispatch: the timer's tasks, their handling on any instance,
and ticks or tasks that die part-way (finished by the next tick, never lost)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared.dispatcher import Dispatcher, spread_delay
from shared.keys import CollectionKey
from shared.occurrence import OccurrenceMessage
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.store import DispatchQueue, JobStore, OccurrenceQueue, Store, bucket_of
from shared.store.queues import ShardTask
from shared.timings import Timings
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain_dispatch, make_collection

ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}
JOBS = 40
# A message per due second, as a tick sends with no batch span (shared/timings.py `batch_span`): the queue's
# message count then counts occurrences.
PER_SECOND = timedelta(0)


class Crash(BaseException):
    """The process dies here: nothing after this point runs (not an Exception, so nothing catches it)."""


class CrashingDispatchQueue(DispatchQueue):
    def __init__(self, inner: DispatchQueue, sends_before_crash: int) -> None:
        self.__dict__.update(inner.__dict__)
        self.left = sends_before_crash

    def send(self, task: ShardTask, guarded: bool = True, delay: float = 0.0) -> None:
        if self.left == 0:
            raise Crash
        self.left -= 1
        super().send(task, guarded, delay)


class CrashingOccurrenceQueue(OccurrenceQueue):
    def __init__(self, inner: OccurrenceQueue, sends_before_crash: int) -> None:
        self.__dict__.update(inner.__dict__)
        self.left = sends_before_crash

    def send(self, message: OccurrenceMessage, now: datetime) -> None:
        if self.left == 0:
            raise Crash
        self.left -= 1
        super().send(message, now)


class CrashingJobStore(JobStore):
    def __init__(self, inner: JobStore, writes_before_crash: int) -> None:
        self.__dict__.update(inner.__dict__)
        self.left = writes_before_crash

    def replace(self, record: JobRecord) -> JobRecord:
        if self.left == 0:
            raise Crash
        self.left -= 1
        return super().replace(record)

    def replace_many(self, records: list[JobRecord]) -> list[JobRecord | None]:
        if self.left < len(records):
            raise Crash
        self.left -= len(records)
        return super().replace_many(records)


@pytest.fixture
def rt(settings, clock: ManualClock, storage) -> Iterator[Runtime]:
    rt = Runtime.create(replace(settings, due_shards=4), clock, storage=storage)
    make_collection(rt, "P20Premium")
    yield rt
    rt.close()


def _create_jobs(rt: Runtime, clock: ManualClock) -> datetime:
    """JOBS minutely jobs first due in the bucket after next (beyond the API's fast path)."""
    first = clock.now().replace(second=0) + timedelta(minutes=2)
    for i in range(JOBS):
        start = first + timedelta(seconds=i % 60)
        answer = call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            f"job{i:02d}",
            {"properties": {"startTime": start.isoformat(), "recurrence": {"frequency": "Minute"}, "action": ACTION}},
        )
        assert answer.status == 201, answer.body
    return first


def _queued(rt: Runtime) -> int:
    """Occurrence messages queued: each one due within 7 days comes after its hidden backstop and watchdog
    (store/queues.py)."""
    messages = rt.store.queue.client.get_queue_properties().approximate_message_count
    assert messages % 3 == 0, messages
    return messages // 3


def _jobs(rt: Runtime) -> list[JobRecord]:
    return rt.store.jobs.all(CollectionKey(SUB, RG, JC))


def _assert_all_dispatched_once(rt: Runtime, first: datetime, minutes: int = 1) -> None:
    """Every job dispatched `minutes` occurrences (each exactly once: its cursor moved that far) and indexed
    at its next one; the dispatched minutes' partitions are empty."""
    for job in _jobs(rt):
        due = job.properties.start_time
        assert job.dispatched_occurrence == due + timedelta(minutes=minutes - 1), job.key.job
        assert job.next_execution_time == due + timedelta(minutes=minutes), job.key.job
    for minute in range(minutes):  # every shard of the dispatched minutes is empty
        assert rt.store.due.entries(bucket_of(first + timedelta(minutes=minute))) == []
    following = rt.store.due.entries(bucket_of(first + timedelta(minutes=minutes)))
    assert len(following) == JOBS and {e.job.job for e in following} == {f"job{i:02d}" for i in range(JOBS)}


def test_jobs_spread_over_the_shards_and_the_timer_fans_out_one_task_per_bucket_and_shard(rt, clock) -> None:
    first = _create_jobs(rt, clock)
    by_shard = [len(rt.store.due.entries(bucket_of(first), shard)) for shard in range(4)]
    assert sum(by_shard) == JOBS and all(by_shard), by_shard  # every shard holds some of the minute
    clock.current = first - timedelta(minutes=1)  # the tick a minute ahead
    dispatcher = Dispatcher(rt.store, clock, span=PER_SECOND)
    report = dispatcher.fan_out()
    assert report.tasks == report.buckets * 4 and report.buckets >= 2
    assert _queued(rt) == 0  # the timer itself dispatches nothing
    assert drain_dispatch(dispatcher).tasks == report.tasks
    assert _queued(rt) == JOBS
    _assert_all_dispatched_once(rt, first)
    # Doing it all again (a duplicate task, a redelivery, the next tick's overlap) changes nothing.
    dispatcher.fan_out()
    drain_dispatch(dispatcher)
    assert _queued(rt) == JOBS
    _assert_all_dispatched_once(rt, first)


def test_a_timer_that_dies_part_way_is_finished_by_the_next_tick(rt, clock) -> None:
    first = _create_jobs(rt, clock)
    clock.current = first - timedelta(minutes=1)
    watermark = rt.store.due.watermark()
    crashing = replace(rt.store, dispatch=CrashingDispatchQueue(rt.store.dispatch, sends_before_crash=3))
    with pytest.raises(Crash):
        Dispatcher(crashing, clock, span=PER_SECOND).fan_out()
    assert rt.store.due.watermark() == watermark  # it did not claim the window it did not finish
    clock.advance(timedelta(seconds=20))  # the next tick (or a retry of this one)
    dispatcher = Dispatcher(rt.store, clock, span=PER_SECOND)
    dispatcher.fan_out()
    drain_dispatch(dispatcher)
    assert _queued(rt) == JOBS
    _assert_all_dispatched_once(rt, first)


@pytest.mark.parametrize("crash_in", ["sending occurrences", "advancing jobs"])
def test_a_dispatch_task_that_dies_half_way_is_finished_by_the_next_tick(rt, clock, crash_in: str) -> None:
    first = _create_jobs(rt, clock)
    clock.current = first - timedelta(minutes=1)
    dispatcher = Dispatcher(rt.store, clock, span=PER_SECOND)
    dispatcher.fan_out()
    store: Store = rt.store
    if crash_in == "sending occurrences":
        store = replace(rt.store, queue=CrashingOccurrenceQueue(rt.store.queue, sends_before_crash=JOBS // 2))
    else:
        store = replace(rt.store, jobs=CrashingJobStore(rt.store.jobs, writes_before_crash=JOBS // 2))
    dying = Dispatcher(store, clock, span=PER_SECOND)
    with pytest.raises(Crash):  # one instance takes every task and dies in the middle of them
        while True:
            (message,) = rt.store.dispatch.client.receive_messages(max_messages=1, visibility_timeout=600)
            dying.handle_task(message.content)
            rt.store.dispatch.client.delete_message(message)
    sent_before = _queued(rt)
    assert sent_before > 0
    half = [job for job in _jobs(rt) if job.dispatched_occurrence is None]
    assert half, "the crash left work undone"
    clock.advance(timedelta(minutes=1))  # the next tick re-reads the bucket (its overlap); the lost task stays hidden
    dispatcher.fan_out()
    drain_dispatch(dispatcher)
    _assert_all_dispatched_once(rt, first, minutes=2)  # the dead task's minute, and the next tick's own
    # Every occurrence is queued; the ones the dead task had sent are queued twice and die at the claim.
    assert 2 * JOBS <= _queued(rt) <= 2 * JOBS + sent_before


def test_a_task_that_is_never_handled_is_swept_up_by_a_later_tick(rt, clock) -> None:
    first = _create_jobs(rt, clock)
    clock.current = first - timedelta(minutes=1)
    dispatcher = Dispatcher(rt.store, clock, span=PER_SECOND)
    dispatcher.fan_out()
    rt.store.dispatch.client.clear_messages()  # every task lost (expired, poisoned, dropped)
    for _ in range(4):  # past the overlap: only the sweep still looks at that minute
        clock.advance(timedelta(minutes=1))
        dispatcher.fan_out()
        rt.store.dispatch.client.clear_messages()
    clock.advance(timedelta(minutes=1))
    report = dispatcher.fan_out()
    assert report.tasks > report.buckets * 4  # the window's tasks plus the leftovers behind it
    drain_dispatch(dispatcher)
    for job in _jobs(rt):  # missed while nobody dispatched: the latest occurrence runs, none is lost
        assert job.dispatched_occurrence is not None and job.dispatched_occurrence > job.properties.start_time
    assert rt.store.due.entries(bucket_of(first)) == []


def test_lowering_the_shard_count_strands_no_entry(rt, clock, settings, storage) -> None:
    first = _create_jobs(rt, clock)
    fewer = Runtime.create(replace(settings, due_shards=1), clock, storage=storage)
    clock.current = first - timedelta(minutes=1)
    dispatcher = Dispatcher(fewer.store, clock, span=PER_SECOND)
    report = dispatcher.tick()
    assert report.enqueued == JOBS and report.tasks == report.buckets * 4  # it read the four shards in use
    _assert_all_dispatched_once(fewer, first)


def test_the_minute_ahead_turns_visible_shard_by_shard_leaving_a_margin_before_it() -> None:
    tick = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
    ahead, current = bucket_of(tick + timedelta(minutes=1)), bucket_of(tick)
    spread, margin = timedelta(seconds=30), Timings().spread_margin
    assert [spread_delay(ahead, shard, 4, tick, spread, margin) for shard in range(4)] == [0.0, 7.5, 15.0, 22.5]
    # A tick 20 s late spreads over what leaves the margin before the minute ahead begins.
    late = tick + timedelta(seconds=20)
    room = (timedelta(seconds=40) - margin).total_seconds()
    spread_late = [spread_delay(ahead, shard, 4, late, spread, margin) for shard in range(4)]
    assert spread_late == [room * s / 4 for s in range(4)]
    assert spread_delay(ahead, 3, 4, tick + timedelta(seconds=40), spread, margin) == 0.0  # too late to spread
    assert spread_delay(current, 3, 4, tick, spread, margin) == 0.0  # the minute running now (the overlap): at once
    assert spread_delay(ahead, 3, 4, tick, timedelta(0), margin) == 0.0


def test_a_spread_tick_hides_later_shards_and_still_dispatches_everything_once(
    settings, clock: ManualClock, storage
) -> None:
    rt = Runtime.create(replace(settings, due_shards=4, dispatch_spread=timedelta(seconds=8)), clock, storage=storage)
    make_collection(rt, "P20Premium")
    first = _create_jobs(rt, clock)
    clock.current = first - timedelta(minutes=1)  # the tick a minute ahead: shards at 0, 2, 4 and 6 s
    dispatcher = Dispatcher(rt.store, clock, rt.settings.dispatch_spread, span=PER_SECOND)
    report = dispatcher.fan_out()
    queue = rt.store.dispatch.client
    visible = [ShardTask.from_json(m.content) for m in queue.peek_messages(max_messages=32)]
    ahead = bucket_of(first)
    assert {t.shard for t in visible if t.bucket == ahead} == {0}  # no watchdog either: it follows its task
    assert len([t for t in visible if t.bucket != ahead]) == report.tasks - 4  # the overlap's, at once
    deadline = time.monotonic() + 30  # the last shard turns visible 6 s after the tick: room for a busy machine
    handled = drain_dispatch(dispatcher).tasks
    while handled < report.tasks and time.monotonic() < deadline:
        time.sleep(0.5)
        handled += drain_dispatch(dispatcher).tasks
    assert handled == report.tasks
    assert _queued(rt) == JOBS
    _assert_all_dispatched_once(rt, first)
