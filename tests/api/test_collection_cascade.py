"""Enable, disable and delete of a collection answer once the collection's row says so; its jobs follow after
the answer, from tasks on the dispatch queue (shared/lifecycle/cascade.py), a page of jobs per task, written in
transactions (a job changed since the page's read alone), with the ledger and dispatch an enable owes. Until
they do, nothing of the collection runs: the executor reads the collection's state at the second. A task held by
a host that died is brought back by its watchdog within `task_watchdog_after`, not the host's ten-minute receive
(a whole host killed mid-cascade: tests/api/test_collection_cascade_crash.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared.dispatch_trigger import handle_dispatch_message
from shared.keys import CollectionKey, JobKey
from shared.lifecycle.cascade import PAGE, CascadeTask
from shared.model import PREVIEW_API_VERSION, JobState
from shared.occurrence.batch import OccurrenceBatch
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.due import bucket_of
from shared.store.memory import MemoryStorage
from shared.store.queue_client import MessageQueue
from shared.store.storage import Storage
from shared.store.tables import Entity, Table
from shared.timings import Timings
from tests.executor.peers.servers import Server, ok, serve
from tests.store.contract.counted import CountedTable
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection, settle

KEY = CollectionKey(SUB, RG, JC)
NEWER = {"api-version": PREVIEW_API_VERSION}
JOBS = PAGE + 20  # more than one page: the cascade continues itself
WATCHDOG = timedelta(seconds=4)  # task_watchdog_after, short (the default is 10 s)
MARGIN = 10.0  # seconds for the trigger to take the copy up and the pages to run, on a busy machine
HOST_RECEIVE = 600  # the host's receive visibility (devhost/queues.py): what a dead host's task waits out


@pytest.fixture
def target() -> Iterator[Server]:
    server = serve(ok)
    yield server
    server.close()


def _jobs(rt: Runtime, count: int = JOBS, url: str = "http://127.0.0.1:9/hook") -> None:
    start = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()
    for n in range(count):
        answer = call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            f"j{n:03}",
            {
                "properties": {
                    "startTime": start,
                    "recurrence": {"frequency": "Hour"},
                    "action": {"type": "Http", "request": {"uri": url, "method": "GET"}},
                }
            },
        )
        assert answer.status == 201, answer.body


def _states(rt: Runtime) -> set[JobState]:
    return {job.state for job in rt.store.jobs.all(KEY)}


def _queued(rt: Runtime) -> int:
    """Messages on the dispatch queue, hidden ones (watchdogs) too."""
    return rt.store.dispatch.client.get_queue_properties().approximate_message_count


def test_disable_and_enable_answer_first_and_the_jobs_follow_page_by_page(runtime: Runtime) -> None:
    make_collection(runtime, "P20Premium")
    _jobs(runtime)
    answer = call(runtime, "JobCollections_Disable", "POST")
    assert (answer.status, answer.body) == (200, None)
    assert call(runtime, "JobCollections_Get", "GET").body["properties"]["state"] == "Disabled"
    # Nothing per job yet: the task, and its watchdog hidden behind it.
    assert _states(runtime) == {JobState.ENABLED} and _queued(runtime) == 2
    assert settle(runtime) == 2  # two pages: the first task queued the second
    assert _states(runtime) == {JobState.DISABLED}
    assert _queued(runtime) == 0  # each page's handler deleted its watchdog
    assert call(runtime, "JobCollections_Enable", "POST").status == 200
    settle(runtime)
    assert _states(runtime) == {JobState.ENABLED}
    assert all(job.next_execution_time is not None for job in runtime.store.jobs.all(KEY))


def z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _entries(rt: Runtime, planned: set[tuple[str, datetime | None]]) -> set[tuple[str, datetime]]:
    """The due index's entries in the minutes the jobs were planned for, as (job, instant)."""
    buckets = {bucket_of(at) for _, at in planned if at is not None}
    return {(entry.job.job, entry.due) for bucket in buckets for entry in rt.store.due.entries(bucket)}


class _RacedJobs(CountedTable):
    """The jobs table, counting its calls; before the first transaction that replaces jobs, another write (the row
    stored again as it is) changes the first job's ETag, as a PATCH between the page's read and its write would."""

    def __init__(self, table: Table) -> None:
        super().__init__(table)
        self.raced = False

    def replace_batch(self, entities: list[tuple[Entity, str]], attempts: int = 2) -> list[str | None]:
        if not self.raced:
            self.raced = True
            first = self.table.get(str(entities[0][0]["PartitionKey"]), str(entities[0][0]["RowKey"]))
            assert first is not None
            self.table.upsert(dict(first))
        self.calls["replace_batch"] += 1
        return self.table.replace_batch(entities, attempts)


class _CountedStorage:
    """The memory store, its jobs table raced once (above) and its due index's table counted."""

    def __init__(self, inner: MemoryStorage) -> None:
        self.inner = inner

    def table(self, account: int, name: str) -> Table:
        table = self.inner.table(account, name)
        return _RacedJobs(table) if name.endswith("Jobs") else CountedTable(table)

    def queue(self, name: str) -> MessageQueue:
        return self.inner.queue(name)


def test_a_page_of_jobs_moves_in_one_transaction_and_a_job_changed_since_its_read_alone(
    settings: Settings, memory_storage: MemoryStorage
) -> None:
    rt = Runtime.create(settings, storage=_CountedStorage(memory_storage))
    try:
        make_collection(rt, "P20Premium")
        _jobs(rt)
        jobs, due = rt.store.jobs.table, rt.store.due.table
        assert isinstance(jobs, _RacedJobs) and isinstance(due, CountedTable)
        planned = {(job.key.job, job.next_execution_time) for job in rt.store.jobs.all(KEY)}
        jobs.calls.clear()
        due.calls.clear()
        assert call(rt, "JobCollections_Disable", "POST").status == 200
        assert settle(rt) == 2
        assert _states(rt) == {JobState.DISABLED}
        # A page of 100 and one of 20: a transaction each, not a read-modify-write per job (120 replaces). The raced
        # job, refused by the first, moves alone: its page's record refused again, then read and written.
        assert jobs.calls["replace_batch"] == 2 and jobs.calls["replace"] == 2 and jobs.raced
        # The old due entries went a transaction per index partition and page, not a delete each.
        assert 0 < due.calls["delete_batch"] <= 2 * rt.store.due.shards and due.calls["delete"] <= 1
        assert _entries(rt, planned) == set()
        assert call(rt, "JobCollections_Enable", "POST").status == 200
        settle(rt)
        assert _states(rt) == {JobState.ENABLED} and jobs.calls["replace_batch"] == 4 and jobs.calls["replace"] == 2
        assert {(job.key.job, job.next_execution_time) for job in rt.store.jobs.all(KEY)} == planned
        assert _entries(rt, planned) == planned  # each job's entry at its instant again
    finally:
        rt.close()


def test_a_cascade_overtaken_by_the_next_state_change_does_nothing(runtime: Runtime) -> None:
    make_collection(runtime)
    _jobs(runtime, 3)
    assert call(runtime, "JobCollections_Disable", "POST").status == 200
    assert call(runtime, "JobCollections_Enable", "POST").status == 200  # before the disable's task ran
    settle(runtime)
    assert _states(runtime) == {JobState.ENABLED}
    patched = call(runtime, "JobCollections_Patch", "PATCH", body={"properties": {"state": "Disabled"}})
    assert patched.status == 200 and patched.body["properties"]["state"] == "Disabled"
    settle(runtime)  # a PATCH between Enabled and Disabled cascades like POST disable
    assert _states(runtime) == {JobState.DISABLED}


def test_nothing_of_a_disabled_collection_fires_while_its_jobs_still_say_enabled(
    runtime: Runtime, target: Server
) -> None:
    make_collection(runtime)
    answer = call(
        runtime,
        "Jobs_CreateOrUpdate",
        "PUT",
        "now",
        {"properties": {"action": {"type": "Http", "request": {"uri": target.url, "method": "GET"}}}},
    )
    assert answer.status == 201  # no startTime: due now, its occurrence queued at once
    assert call(runtime, "JobCollections_Disable", "POST").status == 200
    assert runtime.store.jobs.get(JobKey(SUB, RG, JC, "now")).state == JobState.ENABLED  # the cascade is queued
    assert drain(runtime, 10, until=lambda: True) == 1
    assert target.hits == []
    assert call(runtime, "Jobs_ListJobHistory", "GET", "now").body["value"] == []


def test_delete_answers_with_the_collection_gone_and_its_jobs_are_purged_after(runtime: Runtime) -> None:
    make_collection(runtime, "P20Premium")
    _jobs(runtime)
    assert call(runtime, "JobCollections_Delete", "DELETE").status == 200
    assert call(runtime, "JobCollections_Get", "GET").status == 404
    assert call(runtime, "Jobs_Get", "GET", "j000").status == 404
    assert call(runtime, "JobCollections_Patch", "PATCH", body={"tags": {"a": "b"}}).status == 404
    assert call(runtime, "JobCollections_Enable", "POST").status == 404
    listed = call(runtime, "JobCollections_ListByResourceGroup", "GET", collection=None)
    assert listed.status == 200 and listed.body["value"] == []
    assert len(runtime.store.jobs.all(KEY)) == JOBS  # the purge is queued, not done
    settle(runtime)
    assert runtime.store.jobs.all(KEY) == [] and runtime.store.collections.get(KEY) is None


def test_a_collection_created_again_before_its_purge_ran_starts_empty(runtime: Runtime) -> None:
    make_collection(runtime)
    _jobs(runtime, 5)
    assert call(runtime, "JobCollections_Delete", "DELETE").status == 200
    make_collection(runtime)  # 201, as after a finished delete: this PUT finished the purge
    assert runtime.store.jobs.all(KEY) == []
    assert call(runtime, "Jobs_List", "GET").body["value"] == []
    settle(runtime)  # the queued purge finds a live collection and leaves it alone
    assert runtime.store.collections.get(KEY) is not None


@pytest.fixture
def short(settings: Settings, storage: Storage | None) -> Iterator[Runtime]:
    """A runtime whose dispatch-queue tasks' watchdogs turn visible `WATCHDOG` after their send or last renewal."""
    runtime = Runtime.create(replace(settings, timings=Timings(task_watchdog_after=WATCHDOG)), storage=storage)
    yield runtime
    runtime.close()


def _trigger_until(rt: Runtime, done: Callable[[], bool], within: float) -> float:
    """Play the dispatch trigger (receive as the host does, handle, delete) until `done()`; the seconds it took."""
    queue, started = rt.store.dispatch.client, time.monotonic()
    while not done() and time.monotonic() - started < within:
        for message in queue.receive_messages(max_messages=32, visibility_timeout=HOST_RECEIVE):
            handle_dispatch_message(rt, message.content)
            queue.delete_message(message)
        time.sleep(0.05)
    return time.monotonic() - started


def test_a_cascade_task_whose_host_died_before_handling_it_is_done_by_its_watchdog(short: Runtime) -> None:
    make_collection(short, "P20Premium")
    _jobs(short)
    assert call(short, "JobCollections_Disable", "POST").status == 200
    # The host received the task (hidden for its ten minutes) and died before its handler began.
    (held,) = short.store.dispatch.client.receive_messages(max_messages=32, visibility_timeout=HOST_RECEIVE)
    took = _trigger_until(short, lambda: _states(short) == {JobState.DISABLED}, WATCHDOG.total_seconds() + MARGIN)
    assert _states(short) == {JobState.DISABLED}, took
    assert took <= WATCHDOG.total_seconds() + MARGIN
    assert _queued(short) == 1  # the held task alone: every copy's handler deleted its watchdog
    # Ten minutes on, the held task comes back: the cascade is done, its page finds nothing and queues nothing.
    handle_dispatch_message(short, held.content)
    short.store.dispatch.client.delete_message(held)
    assert _queued(short) == 0 and _states(short) == {JobState.DISABLED}


def test_a_cascade_page_held_past_its_watchdog_time_keeps_it_hidden_and_a_death_brings_it_back(
    short: Runtime,
) -> None:
    make_collection(short, "P20Premium")
    _jobs(short)
    assert call(short, "JobCollections_Disable", "POST").status == 200
    (held,) = short.store.dispatch.client.receive_messages(max_messages=32, visibility_timeout=HOST_RECEIVE)
    task = CascadeTask.from_json(held.content)
    assert task is not None and task.watchdog is not None  # sent after its watchdog
    watch = short.dispatcher.watchdogs.open(task)  # what the handler does first (run_task)
    time.sleep(2 * WATCHDOG.total_seconds())  # a page that runs long: its renewals keep the watchdog hidden
    assert short.store.dispatch.client.peek_messages(max_messages=32) == []
    short.dispatcher.watchdogs.abandon(watch)  # the process goes away mid-page: no more renewals
    took = _trigger_until(short, lambda: _states(short) == {JobState.DISABLED}, WATCHDOG.total_seconds() + MARGIN)
    assert _states(short) == {JobState.DISABLED}, took
    assert took <= WATCHDOG.total_seconds() + MARGIN
    print(f"done {took:.1f} s after the handler's death (task_watchdog_after {WATCHDOG.total_seconds():g} s)")


def test_jobs_enabled_again_by_their_collection_name_what_they_missed_and_queue_what_is_due(
    settings: Settings, clock: ManualClock
) -> None:
    rt = Runtime.create(settings, clock, storage=MemoryStorage(clock))
    try:
        make_collection(rt)
        start = clock.now().replace(second=0) + timedelta(minutes=5)  # past the dispatch horizon: nothing queued
        for name in ("a", "b"):
            body = {
                "properties": {
                    "startTime": start.isoformat(),
                    "recurrence": {"frequency": "Minute"},
                    "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
                }
            }
            assert call(rt, "Jobs_CreateOrUpdate", "PUT", name, body).status == 201
        assert call(rt, "JobCollections_Disable", "POST").status == 200
        settle(rt)
        clock.current = start + timedelta(minutes=10, seconds=30)  # eleven occurrences each while Disabled
        assert call(rt, "JobCollections_Enable", "POST").status == 200
        settle(rt)
        following = start + timedelta(minutes=11)
        for name in ("a", "b"):
            history = call(rt, "Jobs_ListJobHistory", "GET", name, query=NEWER).body["value"]
            named = [(h["properties"]["occurrenceTime"], h["properties"]["reason"]) for h in history]
            assert named == [(z(start + timedelta(minutes=n)), "CollectionDisabled") for n in range(10, -1, -1)]
            # Due within the dispatch horizon: queued by the enable and advanced past it, its entry with it.
            job = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
            assert job is not None and job.next_execution_time == following + timedelta(minutes=1)
        clock.current = following  # the occurrences' messages turn visible at their second
        batches = [OccurrenceBatch.from_json(m.content) for m in rt.store.queue.client.peek_messages(max_messages=32)]
        assert sorted((i.job.job, i.due) for b in batches for i in b.items) == [("a", following), ("b", following)]
        assert {(e.job.job, e.due) for e in rt.store.due.entries(bucket_of(following + timedelta(minutes=1)))} == {
            ("a", following + timedelta(minutes=1)),
            ("b", following + timedelta(minutes=1)),
        }
    finally:
        rt.close()
