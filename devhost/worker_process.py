"""The process side of FUNCTIONS_WORKER_PROCESS_COUNT: one worker process, as one Python worker of the Functions host.

Contract of `serve(connection, app_dir, environ, levels)` (the target workers.py starts with the spawn context):
- Takes the host's app settings (`environ`) and logger levels (`levels`), imports and indexes the app the way the
  host does (indexing.py), starts its own Invoker (its own PYTHON_THREADPOOL_THREAD_COUNT pool and event loop),
  then sends ("ready", pid); or ("startup_failed", text) and exits when the app cannot be loaded.
- Then takes ("invoke", call id, function name, plain trigger, reason) messages, each on a thread of its own that
  waits on the Invoker as a host's caller does, and answers ("done", call id, plain result) or ("failed", call id,
  plain exception) (worker_wire.py). Every log record of the process goes to the host as ("log", plain record),
  on the same connection, so an invocation's log lines reach the host before its answer.
- ("stop", grace) or the host's end of the connection closing (the host died): the Invoker stops within `grace`
  (running coroutines are cancelled and answered as failed) and the process exits at once, even if a `def`
  function still runs (os._exit: its thread cannot be interrupted, and the host has given up on it).
- SIGINT and SIGHUP are ignored: a terminal's Ctrl-C or hang-up reaches the whole process group, and the host,
  not the terminal, decides when its workers stop.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from devhost import worker_wire
from devhost.indexing import FunctionInfo, index_app
from devhost.invoker import Invoker

log = logging.getLogger(__name__)
# Threads that wait on the Invoker, one per invocation in flight: the host's own callers bound how many there are
# (queue batches, HTTP connections, timers), so this only has to be larger than they ever are together.
CALL_THREADS = 512
CANCEL_ANSWER_SECONDS = 0.2


class _Sender:
    """One connection written by many threads (answers and log records): one message at a time."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._lock = threading.Lock()
        self.closed = False

    def send(self, message: tuple[Any, ...]) -> None:
        with self._lock:
            if self.closed:
                return
            try:
                self._connection.send(message)
            except (OSError, ValueError):  # the host went away: nobody is left to tell
                self.closed = True


class _ToHost(logging.Handler):
    def __init__(self, sender: _Sender) -> None:
        super().__init__()
        self._sender = sender

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._sender.send(("log", worker_wire.record_to_plain(record)))
        except Exception:
            self.handleError(record)


def _log_to_host(sender: _Sender, levels: Mapping[str, int]) -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(_ToHost(sender))
    for name, level in levels.items():
        logging.getLogger(name or None).setLevel(level)


def _call(sender: _Sender, invoker: Invoker, function: FunctionInfo, message: tuple[Any, ...]) -> None:
    _, call_id, _, trigger, reason = message
    try:
        result = invoker.invoke(function, worker_wire.trigger_from_plain(trigger), reason)
    except BaseException as error:  # the Invoker logged it; the host decides what a failure means
        sender.send(("failed", call_id, worker_wire.error_to_plain(error)))
        return
    sender.send(("done", call_id, worker_wire.result_to_plain(result)))


def serve(connection: Connection, app_dir: str, environ: Mapping[str, str], levels: Mapping[str, int]) -> None:
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    os.environ.clear()
    os.environ.update(environ)
    sender = _Sender(connection)
    _log_to_host(sender, levels)
    try:
        functions = {f.name: f for f in index_app(Path(app_dir)).functions}
        invoker = Invoker()
        invoker.start()
    except BaseException as error:
        sender.send(("startup_failed", f"{type(error).__name__}: {error}"))
        connection.close()
        return
    sender.send(("ready", os.getpid()))
    grace = 2.0
    calls = ThreadPoolExecutor(CALL_THREADS, thread_name_prefix="devhost-call")
    running: set[Future[None]] = set()
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            break
        if message[0] == "stop":
            grace = message[1]
            break
        call = calls.submit(_call, sender, invoker, functions[message[2]], message)
        running.add(call)
        call.add_done_callback(running.discard)
    invoker.stop(grace)
    # The cancelled invocations' answers (their CancelledError) are on their way; let them reach the host.
    wait(list(running), timeout=CANCEL_ANSWER_SECONDS)
    sys.stdout.flush()
    sys.stderr.flush()
    # Answers already sent are in the pipe; a `def` function still running is abandoned, as the host gave up on it.
    os._exit(0)
