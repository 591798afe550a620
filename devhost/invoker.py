"""Calling user functions the way the Python worker does.

Contract: `Invoker.invoke(function, trigger_value, reason)` calls the function with the trigger value under
its trigger parameter name and hands back what it returned. As in the Python worker, `def` functions run
on one thread pool of `PYTHON_THREADPOOL_THREAD_COUNT` threads (1-32; else Python's own default,
min(32, CPUs + 4)) shared by every trigger, and `async def` functions run on one event loop; the caller's
thread waits for the result. So a queue trigger may hand over batchSize + newBatchThreshold messages at
once, but no more `def` invocations run at a time than the worker's pool allows, whatever the trigger.
On failure the traceback is logged once, here, and the exception propagates. Invocations log
"Executing/Executed 'Functions.<name>'" like the host. An invocation that `stop()` cancels (Ctrl-C while it runs
or waits for the pool) logs one line, "Cancelled 'Functions.<name>' ...: the host stopped while it ran", no
traceback, and its CancelledError propagates.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from typing import Any, Protocol

from devhost.indexing import FunctionInfo
from devhost.settings import whole_setting

log = logging.getLogger(__name__)
THREAD_COUNT_SETTING = "PYTHON_THREADPOOL_THREAD_COUNT"


def worker_thread_count(env: Mapping[str, str] | None = None) -> int:
    """The size of the worker's pool for `def` functions: the setting when valid (1-32), else Python's default."""
    return whole_setting(THREAD_COUNT_SETTING, 32, min(32, (os.cpu_count() or 1) + 4), "using the default", env)


class Invokes(Protocol):
    """What the triggers call: an Invoker in the host's process, or workers.WorkerPool across worker processes."""

    def start(self) -> None: ...

    def stop(self, timeout: float = 2.0) -> None: ...

    def invoke(self, function: FunctionInfo, trigger_value: Any, reason: str) -> Any: ...


class Invoker:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._cancel_grace = 1.0
        self._sync_pool: ThreadPoolExecutor | None = None
        self.thread_count = 0

    def start(self) -> None:
        self.thread_count = worker_thread_count()
        self._sync_pool = ThreadPoolExecutor(self.thread_count, thread_name_prefix="devhost-worker")
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._loop = loop

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()
            # Stopping: cancel what still runs, and keep the loop turning until the cancellations have
            # reached the threads waiting on them; otherwise those threads would wait forever.
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.wait(tasks, timeout=self._cancel_grace))
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

        self._thread = threading.Thread(target=run, name="devhost-event-loop", daemon=True)
        self._thread.start()
        ready.wait()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the loop; running coroutines are cancelled and their callers get a CancelledError."""
        deadline = time.monotonic() + timeout
        pool, self._sync_pool = self._sync_pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None:
            self._cancel_grace = max(timeout - 0.1, 0.05)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            self._loop = self._thread = None
        if pool is not None:
            # Idle workers leave as soon as they see the shutdown; wait for them (a sync function still
            # running cannot be interrupted, so at most until the deadline) so a stopped host leaves no threads.
            waiter = threading.Thread(target=pool.shutdown, kwargs={"wait": True}, daemon=True)
            waiter.start()
            waiter.join(max(deadline - time.monotonic(), 0.0))

    def _run_coroutine(self, coroutine: Any) -> Any:
        loop = self._loop
        if loop is None or not loop.is_running():
            coroutine.close()
            raise RuntimeError("the local host is not running")
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, loop)
        return future.result()

    def _run_sync(self, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        pool = self._sync_pool
        if pool is None:
            raise RuntimeError("the local host is not running")
        return pool.submit(function, **kwargs).result()

    def invoke(self, function: FunctionInfo, trigger_value: Any, reason: str) -> Any:
        invocation_id = str(uuid.uuid4())
        log.info("Executing 'Functions.%s' (Reason='%s', Id=%s)", function.name, reason, invocation_id)
        kwargs = {function.trigger_parameter: trigger_value}
        started = time.monotonic()
        try:
            if function.is_async:
                result = self._run_coroutine(function.user_function(**kwargs))
            else:
                result = self._run_sync(function.user_function, kwargs)
        except (CancelledError, asyncio.CancelledError):
            # stop() cancelled it (Ctrl-C): an expected end, said in one line, not a failure's traceback.
            log.warning(
                "Cancelled 'Functions.%s' (Id=%s, Duration=%dms): the host stopped while it ran, so it was cut short",
                function.name,
                invocation_id,
                (time.monotonic() - started) * 1000,
            )
            raise
        except BaseException:
            log.exception(
                "Executed 'Functions.%s' (Failed, Id=%s, Duration=%dms)",
                function.name,
                invocation_id,
                (time.monotonic() - started) * 1000,
            )
            raise
        log.info(
            "Executed 'Functions.%s' (Succeeded, Id=%s, Duration=%dms)",
            function.name,
            invocation_id,
            (time.monotonic() - started) * 1000,
        )
        return result
