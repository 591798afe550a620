"""FUNCTIONS_WORKER_PROCESS_COUNT: the local host's functions run in several worker processes, as on the Functions host.

Contract:
- `worker_process_count(env)`: the setting, 1-10 as the Functions host accepts; unset means 1; anything else logs
  one warning and means 1. With 1 the host runs the app in its own process (invoker.py) and none of this runs.
- `WorkerPool(app_dir, count)` has the Invoker's interface (`start`, `stop`, `invoke`), so the HTTP front end,
  queue listeners and timers stay in the host process, as they stay in the Functions host, and hand every
  invocation to one of `count` processes started with the spawn context (worker_process.py): each imports the app
  as the host does and runs it with an Invoker of its own (its own PYTHON_THREADPOOL_THREAD_COUNT pool and event
  loop, as each Python worker process of the Functions host has). Trigger values and results cross as plain data
  (worker_wire.py); a function's exception is raised again from `invoke`, as in-process.
- Invocations go round robin over the workers that are up, as the Functions host's dispatcher does (a counter over
  its worker channels): the local figures then spread load as the cloud would; least-busy would flatter them.
- `WorkerPool(app_dir, count, group)`: `group` (e.g. "HTTP") names its processes in the log when the host runs
  two pools (per_function_scaling.py); empty, the default, for the one pool of all the functions.
- `start()` returns once every worker has loaded the app, and logs once how many run; it raises WorkerStartError
  (leaving nothing running) when one cannot load it.
- A worker that dies fails its in-flight invocations with WorkerProcessExited (a queue message then reappears after
  its visibility timeout, as when a function raises; an HTTP request answers 500) and a new one is started in its
  place; invocations meanwhile go to the others (or wait for one to be up). A replacement that cannot load the app
  is retried every RESTART_BACKOFF_SECONDS.
- `stop(timeout)` asks every worker to stop (running coroutines cancelled), then terminates, then kills what is
  left, all within `timeout`. Each worker's log records are handled by the host's loggers (levels and handlers), so
  the log reads as with one process.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from itertools import count as counter
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from devhost import worker_process, worker_wire
from devhost.indexing import FunctionInfo
from devhost.settings import whole_setting

log = logging.getLogger(__name__)
PROCESS_COUNT_SETTING = "FUNCTIONS_WORKER_PROCESS_COUNT"
MAX_PROCESSES = 10
START_SECONDS = 120.0  # importing the app on a loaded machine
RESTART_BACKOFF_SECONDS = 5.0


def worker_process_count(env: Mapping[str, str] | None = None) -> int:
    return whole_setting(PROCESS_COUNT_SETTING, MAX_PROCESSES, 1, "the functions run in the host's process", env)


class WorkerStartError(RuntimeError):
    """A worker process could not load the app."""


class WorkerProcessExited(RuntimeError):
    """The worker process running an invocation died before it answered."""


class _Worker:
    def __init__(self, slot: int, process: BaseProcess, connection: Connection, group: str) -> None:
        self.slot, self.process, self.connection, self.group = slot, process, connection, group
        self.send_lock = threading.Lock()
        self.calls: dict[int, Future[tuple[Any, ...]]] = {}
        self.ready = threading.Event()
        self.ended = threading.Event()
        self.alive = True
        self.failure = ""

    @property
    def name(self) -> str:
        return f"{self.group + ' ' if self.group else ''}worker process {self.slot + 1} (pid {self.process.pid})"


def _levels() -> dict[str, int]:
    """The host's logger levels, for a worker to log (and send) exactly what the host would print."""
    levels = {"": logging.getLogger().level}
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET:
            levels[name] = logger.level
    return levels


def _emit(plain: dict[str, Any]) -> None:
    record = logging.makeLogRecord(plain)
    logger = logging.getLogger(record.name)
    if logger.isEnabledFor(record.levelno):
        logger.handle(record)


class WorkerPool:
    def __init__(self, app_dir: Path, count: int, group: str = "") -> None:
        self.app_dir = Path(app_dir).resolve()
        self.count = count
        self.group = group
        self._context = multiprocessing.get_context("spawn")
        self._workers: list[_Worker | None] = [None] * count
        self._changed = threading.Condition()
        self._turn = 0
        self._ids = counter()
        self._stopping = threading.Event()

    @property
    def pids(self) -> tuple[int, ...]:
        """The worker processes that are up, by slot."""
        with self._changed:
            return tuple(w.process.pid or 0 for w in self._workers if w is not None and w.alive and w.ready.is_set())

    def start(self) -> None:
        try:
            workers = [self._spawn(slot) for slot in range(self.count)]
            deadline = time.monotonic() + START_SECONDS
            for worker in workers:
                if not self._await_ready(worker, deadline):
                    raise WorkerStartError(f"{worker.name} could not load the app: {worker.failure or 'no answer'}")
        except BaseException:
            self.stop(1.0)
            raise
        log.info(
            "%d worker process%s run%s the %sfunctions (%s), pids %s",
            self.count,
            "" if self.count == 1 else "es",
            "s" if self.count == 1 else "",
            f"{self.group} " if self.group else "",
            PROCESS_COUNT_SETTING,
            ", ".join(str(pid) for pid in self.pids),
        )

    def stop(self, timeout: float = 2.0) -> None:
        deadline = time.monotonic() + timeout
        self._stopping.set()
        with self._changed:
            workers = [w for w in self._workers if w is not None]
            self._changed.notify_all()
        for worker in workers:
            try:
                with worker.send_lock:
                    worker.connection.send(("stop", timeout * 0.4))
            except (OSError, ValueError):
                pass  # already gone
        for share, end in ((0.6, BaseProcess.terminate), (0.85, BaseProcess.kill), (1.0, None)):
            for worker in workers:
                worker.process.join(max(deadline - timeout * (1 - share) - time.monotonic(), 0.0))
            for worker in workers:
                if end is not None and worker.process.is_alive():
                    end(worker.process)
        for worker in workers:
            worker.process.join(0.5)  # a killed process is gone at once; reap it
            worker.connection.close()

    def invoke(self, function: FunctionInfo, trigger_value: Any, reason: str) -> Any:
        trigger = worker_wire.trigger_to_plain(function.trigger_type, trigger_value)
        future: Future[tuple[Any, ...]] = Future()
        call_id = next(self._ids)
        worker = self._assign(call_id, future)
        try:
            with worker.send_lock:
                worker.connection.send(("invoke", call_id, function.name, trigger, reason))
        except (OSError, ValueError) as error:
            with self._changed:
                worker.calls.pop(call_id, None)
            raise WorkerProcessExited(f"{worker.name} could not take the invocation: {error}") from error
        answer = future.result()
        if answer[0] == "failed":
            raise worker_wire.error_from_plain(answer[2])
        return worker_wire.result_from_plain(answer[2])

    def _assign(self, call_id: int, future: Future[tuple[Any, ...]]) -> _Worker:
        """The next worker that is up, round robin over the slots; waits while none is (all restarting)."""
        with self._changed:
            while not self._stopping.is_set():
                for step in range(self.count):
                    slot = (self._turn + step) % self.count
                    worker = self._workers[slot]
                    if worker is not None and worker.alive and worker.ready.is_set():
                        self._turn = slot + 1
                        worker.calls[call_id] = future
                        return worker
                self._changed.wait()
        raise RuntimeError("the local host is not running")

    def _spawn(self, slot: int) -> _Worker:
        host_end, worker_end = self._context.Pipe()
        process = self._context.Process(
            target=worker_process.serve,
            args=(worker_end, str(self.app_dir), dict(os.environ), _levels()),
            name=f"devhost-worker-{slot + 1}",
            daemon=True,  # terminated by multiprocessing if the host exits without stop()
        )
        process.start()
        worker_end.close()  # the worker's copy only: its death is then the end of this connection
        with self._changed:
            stopping = self._stopping.is_set()
            if not stopping:
                worker = self._workers[slot] = _Worker(slot, process, host_end, self.group)
        if stopping:  # stop() has taken its list of workers: this one would be left behind
            process.kill()
            process.join(1.0)
            host_end.close()
            raise RuntimeError("the local host is stopping")
        threading.Thread(target=self._read, args=(worker,), name=f"devhost-worker-{slot + 1}", daemon=True).start()
        return worker

    def _await_ready(self, worker: _Worker, deadline: float) -> bool:
        while time.monotonic() < deadline and not worker.ready.is_set() and not worker.ended.is_set():
            worker.ended.wait(0.05)
        return worker.ready.is_set() and worker.alive

    def _read(self, worker: _Worker) -> None:
        try:
            while True:
                message = worker.connection.recv()
                if message[0] == "log":
                    _emit(message[1])
                elif message[0] in ("done", "failed"):
                    with self._changed:
                        future = worker.calls.pop(message[1], None)
                    if future is not None:
                        future.set_result(message)
                elif message[0] == "ready":
                    with self._changed:
                        worker.ready.set()
                        self._changed.notify_all()
                elif message[0] == "startup_failed":
                    worker.failure = message[1]
        except (EOFError, OSError):
            pass
        self._ended(worker)

    def _ended(self, worker: _Worker) -> None:
        with self._changed:
            worker.alive = False
            calls, worker.calls = worker.calls, {}
        worker.ended.set()
        worker.process.join(1.0)
        error = WorkerProcessExited(f"{worker.name} exited (code {worker.process.exitcode}) during the invocation")
        for future in calls.values():
            future.set_exception(error)
        if self._stopping.is_set() or not worker.ready.is_set():
            return  # stopping, or a start that failed: start() or _replace() reports it
        log.warning(
            "%s exited (code %s) with %d invocation(s) in flight, which failed; starting a new one",
            worker.name,
            worker.process.exitcode,
            len(calls),
        )
        self._replace(worker.slot)

    def _replace(self, slot: int) -> None:
        while not self._stopping.is_set():
            try:
                worker = self._spawn(slot)
            except RuntimeError:
                return  # stopping
            if self._await_ready(worker, time.monotonic() + START_SECONDS):
                log.info("%s started in place of the one that exited", worker.name)
                return
            log.error("%s could not load the app: %s", worker.name, worker.failure or "no answer")
            worker.process.kill()
            self._stopping.wait(RESTART_BACKOFF_SECONDS)
