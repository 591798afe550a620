"""The dispatch queue's trigger: each message is a dispatch task, for the dispatcher, or a collection's cascade task,
which it hands to the lifecycle (shared/lifecycle/cascade.py `run_task`).

- Told apart by the body: a cascade task's JSON names its cascade (`CascadeTask.from_json`); anything else is a
  dispatch task (shared/task_run.py `parse_task`, which drops one malformed, logged).
- `handle_dispatch_message_async` is what function_app.py binds: the task runs on the runtime's dispatch-task lane
  (shared/threads.py), so dispatch and cascade work never holds the worker's thread pool, which every API request
  needs (PYTHON_THREADPOOL_THREAD_COUNT: a few threads per process). A busy minute's dispatch then cannot keep an
  API call waiting. A dispatch task that holds advances back (shared/task_run.py) waits for them on the event
  loop, between its two halves on the lane: the lane's threads stay for the tasks that have work.
- Raises on storage faults: the host delivers the message again (both kinds of task are idempotent).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from typing import TYPE_CHECKING

from .clock import pause_until
from .lifecycle.cascade import CascadeTask, run_task
from .task_run import TaskRun, parse_task
from .threads import DISPATCH_TASK

if TYPE_CHECKING:
    from .runtime import Runtime


async def handle_dispatch_message_async(rt: Runtime, text: str) -> None:
    """The trigger, a coroutine: the message handled on the dispatch-task lane, a held advance waited for here."""
    lane = rt.threads.lane(DISPATCH_TASK)
    started = lane.submit(start_dispatch_message, rt, text)
    try:
        run = await asyncio.wrap_future(started)
    except asyncio.CancelledError:  # the process is going away; a task begun meanwhile is let go
        started.add_done_callback(lambda done: _let_go(rt, done))
        raise
    if run is None or (until := run.until) is None:
        return
    try:
        await pause_until(rt.clock, until)
    except BaseException as error:  # cancelled: the process is going away, the watchdog brings the task back
        run.let_go(rt.dispatcher.watchdogs, error)
        raise
    await asyncio.wrap_future(lane.submit(rt.dispatcher.finish_task, run))


def handle_dispatch_message(rt: Runtime, text: str) -> None:
    """The trigger, in this thread: as the coroutine, a held advance waited for on this thread."""
    if (run := start_dispatch_message(rt, text)) is not None:
        run.wait(rt.clock)
        rt.dispatcher.finish_task(run)


def start_dispatch_message(rt: Runtime, text: str) -> TaskRun | None:
    """The message's work up to a wait: a cascade task, a task to drop or a dispatch task that holds nothing back,
    done (None); else the dispatch task whose held advances wait for `until`."""
    cascade = CascadeTask.from_json(text)
    if cascade is not None:
        run_task(rt, cascade)
        return None
    if (task := parse_task(text, rt.store.due.accounts)) is None:
        return None
    run = rt.dispatcher.begin_task(task)
    if run.until is None:
        rt.dispatcher.finish_task(run)
        return None
    return run


def _let_go(rt: Runtime, started: Future[TaskRun | None]) -> None:
    """A task whose first half ended after its trigger was cancelled: its watchdog abandoned, to bring it back."""
    if not started.cancelled() and started.exception() is None and (run := started.result()) is not None:
        run.abandon(rt.dispatcher.watchdogs)
