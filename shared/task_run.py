"""A dispatch task between its dispatch and its held advances (dispatcher.py `begin_task` and `finish_task`).

A task holds back the advance of a job whose running occurrence is about to be recorded (`jobstate.recorded_by`)
until that record is due in, seconds later. The queue trigger (dispatch_trigger.py) waits for `until` on its event
loop, not on a dispatch-task thread: a deployment of many shards runs more tasks a minute than the lane has threads,
and a task that slept on one kept the others off it for its wait. Between the two halves the task's watchdog stays
open (renewed by the dispatch renewer), and the held jobs' entries stay until their advance: a process that goes
away meanwhile leaves both to bring the task back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from .clock import Clock
from .dispatch_report import TickReport
from .due_jobs import Plan
from .leases import TaskWatch, TaskWatchdogs
from .store.queues import MalformedTask, ShardTask

log = logging.getLogger(__name__)


@dataclass(eq=False)
class TaskRun:
    """`report`: what the dispatch counted so far; `held`: the plans whose advance waits; `watch`: the task's
    watchdog while it is open (None: the task had nothing to dispatch, or ran in process without one)."""

    task: ShardTask
    report: TickReport = field(default_factory=lambda: TickReport(tasks=1))
    held: list[Plan] = field(default_factory=list)
    watch: TaskWatch | None = None

    @property
    def until(self) -> datetime | None:
        """When the held advances may go (the last of their recorders' writes is due in); None: none is held."""
        return max((plan.held_until for plan in self.held if plan.held_until is not None), default=None)

    def wait(self, clock: Clock) -> None:
        """On this thread, until the held advances may go (at once when none is held)."""
        if (until := self.until) is not None:
            clock.sleep(max((until - clock.now()).total_seconds(), 0.0))

    def close(self, watchdogs: TaskWatchdogs) -> None:
        """The task is done: its watchdog, if it kept one, deleted."""
        if self.watch is not None:
            watchdogs.close(self.watch)

    def let_go(self, watchdogs: TaskWatchdogs, error: BaseException) -> None:
        """The task failed (`error` an Exception: the host delivers it again, so its watchdog is closed) or the
        process is going away (cancelled: the watchdog is left to bring the task back)."""
        if isinstance(error, Exception):
            self.close(watchdogs)
        else:
            self.abandon(watchdogs)

    def abandon(self, watchdogs: TaskWatchdogs) -> None:
        """The process is going away: the watchdog, no longer renewed, is left to bring the task back."""
        if self.watch is not None:
            watchdogs.abandon(self.watch)


def parse_task(text: str, accounts: int) -> ShardTask | None:
    """A dispatch queue message's task; None (logged) for one to drop: malformed, or for an account beyond the
    `accounts` configured."""
    try:
        task = ShardTask.from_json(text)
    except MalformedTask as exc:
        log.error("dropping a malformed dispatch task: %s", exc)
        return None
    if task.account >= accounts:
        log.error("dropping a dispatch task for storage account %d: %d configured", task.account, accounts)
        return None
    return task
