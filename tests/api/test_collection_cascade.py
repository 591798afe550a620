"""Enable, disable and delete of a collection answer once the collection's row says so; its jobs follow after
the answer, from tasks on the dispatch queue (shared/lifecycle/cascade.py), a page of jobs per task. Until
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
from shared.model import JobState
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.storage import Storage
from shared.timings import Timings
from tests.executor.peers.servers import Server, ok, serve
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection, settle

KEY = CollectionKey(SUB, RG, JC)
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
