"""Action targets, one module per target type, all behind `ActionTarget` (base.py).

`ActionRunner` picks the target for an action's type and runs it under the process's action limits
(limits.py); the executor knows nothing of HTTP or queues. Targets that speak asyncio (`run_async`: Http,
StorageQueue) wait on the event loop and hold no thread; a target with only a blocking `run` (Service
Bus, whose AMQP client blocks) runs on the blocking-action lane of the process's threads (shared/threads.py).
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Executor

from ..model import JobActionType, JobErrorAction
from ..settings import Settings
from ..threads import BLOCKING_ACTION, OUTBOUND_LOOKUP, Threads
from .base import Accepted, ActionResult, ActionTarget, ExecutionContext
from .http import HttpTarget
from .limits import ActionLimits, host_of
from .polling import Polled, poll
from .service_bus import ServiceBusTarget
from .storage_queue import StorageQueueTarget

log = logging.getLogger(__name__)


class ActionRunner:
    """`blocking`: where a target that blocks runs (the runtime's blocking-action lane); None: the event loop's
    default executor (a runner built by hand: tests, tools)."""

    def __init__(
        self,
        targets: dict[JobActionType, ActionTarget],
        limits: ActionLimits | None = None,
        blocking: Executor | None = None,
    ) -> None:
        self.targets = targets
        self.limits = limits or ActionLimits()
        self.blocking = blocking

    @classmethod
    def from_settings(cls, settings: Settings, threads: Threads | None = None) -> ActionRunner:
        """The deployment's targets; on the lanes of `threads` (shared/threads.py) when given."""
        lookups = threads.lane(OUTBOUND_LOOKUP) if threads is not None else None
        http, service_bus = HttpTarget(settings, lookups=lookups), ServiceBusTarget(settings)
        return cls(
            {
                JobActionType.HTTP: http,
                JobActionType.HTTPS: http,
                JobActionType.STORAGE_QUEUE: StorageQueueTarget(settings),
                JobActionType.SERVICE_BUS_QUEUE: service_bus,
                JobActionType.SERVICE_BUS_TOPIC: service_bus,
            },
            ActionLimits.from_settings(settings),
            threads.lane(BLOCKING_ACTION) if threads is not None else None,
        )

    def close(self) -> None:
        """Close what the targets hold open across attempts (the managed identity's connections)."""
        for target in {id(t): t for t in self.targets.values()}.values():
            close = getattr(target, "close", None)
            if close is not None:
                close()

    def run(self, action: JobErrorAction, context: ExecutionContext) -> ActionResult:
        """`run_async` in an event loop of its own (tools, tests)."""
        return asyncio.run(self.run_async(action, context))

    async def run_async(self, action: JobErrorAction, context: ExecutionContext) -> ActionResult:
        target = self.targets.get(action.type)
        if target is None:
            return ActionResult(False, f"{action.type.value} actions are not supported by this deployment")
        async with self.limits.slot(host_of(action)):
            try:
                run_async = getattr(target, "run_async", None)
                if run_async is not None:
                    result: ActionResult = await run_async(action, context)
                    return result
                return await asyncio.get_running_loop().run_in_executor(self.blocking, target.run, action, context)
            except Exception as exc:  # a bug in one target must fail the attempt, not the worker
                log.exception("%s action target raised", action.type.value)
                return ActionResult(False, f"{action.type.value} Action - internal error: {type(exc).__name__}")

    def run_poll(self, action: JobErrorAction, context: ExecutionContext, accepted: Accepted) -> Polled:
        """`poll_async` in an event loop of its own (tools, tests)."""
        return asyncio.run(self.poll_async(action, context, accepted))

    async def poll_async(self, action: JobErrorAction, context: ExecutionContext, accepted: Accepted) -> Polled:
        """One poll of the work an Http action's target accepted (polling.py), under the same limits as an action."""
        target = self.targets.get(action.type)
        if not isinstance(target, HttpTarget):
            return Polled(False, f"{action.type.value} actions cannot be polled")
        async with self.limits.slot(host_of(action)):
            try:
                return await poll(target, action, context, accepted)
            except Exception as exc:  # a bug must fail the work, not the worker
                log.exception("polling %s raised", action.type.value)
                return Polled(False, f"{action.type.value} Action - internal error while polling: {type(exc).__name__}")


__all__ = ["Accepted", "ActionLimits", "ActionResult", "Polled", "ActionRunner", "ActionTarget", "ExecutionContext"]
