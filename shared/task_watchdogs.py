"""The watchdogs of the dispatch queue's tasks (a dispatch task with due entries, a page of a collection's cascade):
the same protocol as a batch's (leases.py), without claims or a backstop, since a task is idempotent. A handler takes
the task's watchdog over (hidden anew: the task may have waited for a worker) or sends one, renews it every
`renew_every` while it works, and deletes it at the end; when its process dies, the copy turns visible
`task_watchdog_after` later and a live host runs the task again.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from azure.core.exceptions import HttpResponseError

from .clock import Clock
from .leases import Renewer
from .store import Store
from .store.dispatch_queue import WatchedTask
from .store.queue import Receipt
from .threads import DISPATCH_RENEWER, Threads

log = logging.getLogger(__name__)


@dataclass(eq=False)
class TaskWatch:
    """A task of the dispatch queue (a dispatch or a cascade task) in the hands of this process, and its watchdog."""

    task: WatchedTask
    watchdog: Receipt
    next_renewal: float  # when its renewal is due (monotonic)
    renewing: threading.Lock = field(default_factory=threading.Lock)
    let_go: bool = False


class TaskWatchdogs:
    """Opens, renews and closes the watchdogs of the dispatch queue's tasks."""

    def __init__(self, store: Store, clock: Clock, threads: Threads) -> None:
        self.store = store
        self.clock = clock
        self.timings = store.timings
        self._renewer: Renewer[TaskWatch] = Renewer(self.renew, DISPATCH_RENEWER, clock, self.timings, threads)

    def open(self, task: WatchedTask) -> TaskWatch:
        """Take the task's watchdog over (hidden anew: the task may have waited for a worker) or send one."""
        hidden = self.timings.task_watchdog_after.total_seconds()
        if task.watchdog is not None:
            watchdog = self._rehide(Receipt(*task.watchdog), task)
        else:
            watchdog = self.store.dispatch.send_hidden(task, hidden)
        watch = TaskWatch(task, watchdog, self.clock.monotonic() + self.timings.renew_every.total_seconds())
        self._renewer.add(watch)
        return watch

    @contextlib.contextmanager
    def watching(self, task: WatchedTask) -> Iterator[TaskWatch]:
        """The task's watchdog held while the block runs; closed when it ends; abandoned when it raises (a fault: the
        host delivers the task again, but under a lossy spell that redelivery may be lost for the receive's ten
        minutes, so the watchdog stays to bring the task back) or the process is going away (cancelled)."""
        watch = self.open(task)
        try:
            yield watch
        except BaseException:
            self.abandon(watch)
            raise
        self.close(watch)

    def abandon(self, watch: TaskWatch) -> None:
        """The process is going away mid-task, or the task failed: stop renewing, and leave the watchdog to bring
        the task back."""
        self._renewer.discard(watch)

    def close(self, watch: TaskWatch) -> None:
        self._renewer.discard(watch)
        try:
            self.store.dispatch.delete(watch.watchdog)
        except Exception as error:  # it turns up later, finds the work done, and costs a query or two
            log.warning("could not delete the watchdog of task %s: %s", watch.task, type(error).__name__)

    def drop(self, task: WatchedTask) -> None:
        """A task with nothing to do (no entries to dispatch, a cascade overtaken): its sender's watchdog is not
        needed."""
        if task.watchdog is not None:
            with contextlib.suppress(Exception):
                self.store.dispatch.delete(Receipt(*task.watchdog))

    def renew(self, watch: TaskWatch) -> None:
        try:
            watch.watchdog = self._rehide(watch.watchdog, watch.task)
        except Exception as error:
            log.warning("renewing the watchdog of task %s failed: %s", watch.task, type(error).__name__)
            raise

    def _rehide(self, watchdog: Receipt, task: WatchedTask) -> Receipt:
        hidden = self.timings.task_watchdog_after.total_seconds()
        try:
            return self.store.dispatch.hide(watchdog, hidden)
        except HttpResponseError as error:
            if error.status_code not in (400, 404):
                raise
            # Gone: another worker received it and runs the task too (harmless, a task is idempotent), or a
            # delivery before this one deleted it. This delivery keeps a watchdog of its own.
            return self.store.dispatch.send_hidden(task, hidden)
