"""The dispatch queue's trigger: each message is a dispatch task, for the dispatcher, or a collection's cascade task,
which it hands to the lifecycle (shared/lifecycle/cascade.py `run_task`).

- Told apart by the body: a cascade task's JSON names its cascade (`CascadeTask.from_json`); anything else is a
  dispatch task, which the dispatcher parses (and drops, logged, when it is malformed).
- `handle_dispatch_message_async` is what function_app.py binds: the task runs on the runtime's dispatch-task lane
  (shared/threads.py), so dispatch and cascade work never holds the worker's thread pool, which every API request
  needs (PYTHON_THREADPOOL_THREAD_COUNT: a few threads per process). A busy minute's dispatch then cannot keep an
  API call waiting.
- Raises on storage faults: the host delivers the message again (both kinds of task are idempotent).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from .lifecycle.cascade import CascadeTask, run_task
from .threads import DISPATCH_TASK

if TYPE_CHECKING:
    from .runtime import Runtime


async def handle_dispatch_message_async(rt: Runtime, text: str) -> None:
    """The trigger, a coroutine: the message handled on the dispatch-task lane."""
    await asyncio.get_running_loop().run_in_executor(rt.threads.lane(DISPATCH_TASK), handle_dispatch_message, rt, text)


def handle_dispatch_message(rt: Runtime, text: str) -> None:
    """The trigger, in this thread: a cascade task for the lifecycle, a dispatch task for the dispatcher."""
    task = CascadeTask.from_json(text)
    if task is None:
        rt.dispatcher.handle_task(text)
    else:
        run_task(rt, task)
