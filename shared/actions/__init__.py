"""Action targets, one module per target type, all behind `ActionTarget` (base.py).

`ActionRunner` picks the target for an action's type; the executor knows nothing of HTTP or queues.
"""

from __future__ import annotations

import logging

from ..model import JobActionType, JobErrorAction
from ..settings import Settings
from .base import ActionResult, ActionTarget, ExecutionContext
from .http import HttpTarget
from .service_bus import ServiceBusTarget
from .storage_queue import StorageQueueTarget

log = logging.getLogger(__name__)


class ActionRunner:
    def __init__(self, targets: dict[JobActionType, ActionTarget]) -> None:
        self.targets = targets

    @classmethod
    def from_settings(cls, settings: Settings) -> ActionRunner:
        http, service_bus = HttpTarget(settings), ServiceBusTarget(settings)
        return cls(
            {
                JobActionType.HTTP: http,
                JobActionType.HTTPS: http,
                JobActionType.STORAGE_QUEUE: StorageQueueTarget(settings),
                JobActionType.SERVICE_BUS_QUEUE: service_bus,
                JobActionType.SERVICE_BUS_TOPIC: service_bus,
            }
        )

    def run(self, action: JobErrorAction, context: ExecutionContext) -> ActionResult:
        target = self.targets.get(action.type)
        if target is None:
            return ActionResult(False, f"{action.type.value} actions are not supported by this deployment")
        try:
            return target.run(action, context)
        except Exception as exc:  # a bug in one target must fail the attempt, not the worker
            log.exception("%s action target raised", action.type.value)
            return ActionResult(False, f"{action.type.value} Action - internal error: {type(exc).__name__}")


__all__ = ["ActionResult", "ActionRunner", "ActionTarget", "ExecutionContext"]
