"""Action targets, one module per target type, all behind `ActionTarget` (base.py).

`ActionRunner` picks the target for an action's type; the executor knows nothing of HTTP or queues.
"""

from __future__ import annotations

from ..model import JobActionType, JobErrorAction
from ..settings import Settings
from .base import ActionResult, ActionTarget, ExecutionContext
from .http import HttpTarget


class ActionRunner:
    def __init__(self, targets: dict[JobActionType, ActionTarget]) -> None:
        self.targets = targets

    @classmethod
    def from_settings(cls, settings: Settings) -> ActionRunner:
        http = HttpTarget(settings)
        return cls({JobActionType.HTTP: http, JobActionType.HTTPS: http})

    def run(self, action: JobErrorAction, context: ExecutionContext) -> ActionResult:
        target = self.targets.get(action.type)
        if target is None:
            return ActionResult(False, f"{action.type.value} actions are not supported by this deployment")
        try:
            return target.run(action, context)
        except Exception as exc:  # noqa: BLE001 - a bug in one target must fail the attempt, not the worker
            return ActionResult(False, f"{action.type.value} Action - internal error: {type(exc).__name__}")


__all__ = ["ActionResult", "ActionRunner", "ActionTarget", "ExecutionContext"]
