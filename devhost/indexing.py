"""Function indexing the way the Python worker does it (v2 programming model).

Contract: `index_app(app_dir)` imports the app module (`function_app`, or PYTHON_SCRIPT_FILE_NAME without
".py") with `app_dir` first on sys.path, finds the single module attribute that is a `func.FunctionRegister`
(FunctionApp, AsgiFunctionApp, ...), calls `get_functions()` and describes every function as a
`FunctionInfo`. Anything the local host cannot run faithfully fails here, loudly: triggers other than
http/timer/queue, any binding besides the trigger and an HTTP trigger's `$return` response, and Python
parameters other than the trigger's (the worker refuses unbound ones too; `context` and output bindings are
not provided locally). Values are as declared (`%Setting%` references unresolved).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import azure.functions as func
from azure.functions.decorators.http import HttpTrigger
from azure.functions.decorators.queue import QueueTrigger
from azure.functions.decorators.timer import TimerTrigger

HTTP_TRIGGER = "httpTrigger"
TIMER_TRIGGER = "timerTrigger"
QUEUE_TRIGGER = "queueTrigger"
SUPPORTED_TRIGGERS = (HTTP_TRIGGER, TIMER_TRIGGER, QUEUE_TRIGGER)
RETURN_BINDING = "$return"


class IndexingError(RuntimeError):
    """The app cannot be hosted as declared."""


def _text(value: Any) -> str:
    """Enum members (HttpMethod, AuthLevel) as their wire value; everything else as str."""
    return str(getattr(value, "value", value))


@dataclass(frozen=True)
class FunctionInfo:
    """One indexed function. Trigger-specific fields are None for other trigger types."""

    name: str
    trigger_type: str
    trigger_parameter: str
    user_function: Callable[..., Any] = field(repr=False, compare=False)
    route: str | None = None
    methods: tuple[str, ...] | None = None
    auth_level: str | None = None
    schedule: str | None = None
    run_on_startup: bool = False
    use_monitor: bool | None = None  # None: the host's default (on, unless the schedule fires within a minute)
    queue_name: str | None = None
    connection: str | None = None

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.user_function)

    def describe(self) -> dict[str, Any]:
        """Name, trigger type and what triggers it: route+methods (None = all), schedule, or queue."""
        described: dict[str, Any] = {"name": self.name, "trigger": self.trigger_type}
        if self.trigger_type == HTTP_TRIGGER:
            described |= {"route": self.route, "methods": self.methods}
        elif self.trigger_type == TIMER_TRIGGER:
            described |= {
                "schedule": self.schedule,
                "run_on_startup": self.run_on_startup,
                "use_monitor": self.use_monitor,
            }
        else:
            described |= {"queue_name": self.queue_name, "connection": self.connection}
        return described


@dataclass(frozen=True)
class AppIndex:
    module: ModuleType
    app: func.FunctionRegister
    functions: tuple[FunctionInfo, ...]


def describe_function(function: func.Function) -> FunctionInfo:
    """Read one `func.Function` (from `app.get_functions()`) into a FunctionInfo."""
    name = function.get_function_name() or function.get_user_function().__name__
    trigger = function.get_trigger()
    trigger_type = getattr(trigger, "type", None)
    if trigger is None or trigger_type not in SUPPORTED_TRIGGERS:
        raise IndexingError(
            f"function {name!r}: trigger {trigger_type!r} is not supported by the local host "
            f"(supported: {', '.join(SUPPORTED_TRIGGERS)})"
        )
    for binding in function.get_bindings():
        response = trigger_type == HTTP_TRIGGER and binding.type == "http" and binding.name == RETURN_BINDING
        if binding is not trigger and not response:
            raise IndexingError(
                f"function {name!r}: binding {binding.name!r} of type {binding.type!r} is not supported by the "
                "local host (only the trigger and an HTTP response)"
            )
    common: dict[str, Any] = {
        "name": name,
        "trigger_type": trigger_type,
        "trigger_parameter": trigger.name,
        "user_function": function.get_user_function(),
    }
    if isinstance(trigger, HttpTrigger):
        methods = trigger.methods
        info = FunctionInfo(
            **common,
            route=trigger.route or name,
            methods=None if methods is None else tuple(_text(m).upper() for m in methods),
            auth_level=None if trigger.auth_level is None else _text(trigger.auth_level),
        )
    elif isinstance(trigger, TimerTrigger):
        info = FunctionInfo(
            **common,
            schedule=trigger.schedule,
            run_on_startup=bool(trigger.run_on_startup),
            use_monitor=trigger.use_monitor,
        )
    else:
        assert isinstance(trigger, QueueTrigger), "SUPPORTED_TRIGGERS lists http, timer and queue only"
        info = FunctionInfo(**common, queue_name=trigger.queue_name, connection=trigger.connection)
    _check_parameters(info)
    return info


def _check_parameters(info: FunctionInfo) -> None:
    """The function takes exactly its trigger parameter (locally no `context` and no output bindings)."""
    params = list(inspect.signature(info.user_function).parameters)
    if params != [info.trigger_parameter]:
        raise IndexingError(
            f"function {info.name!r}: Python parameters {params} do not match its bindings "
            f"{[info.trigger_parameter]} (the local host provides no 'context')"
        )


def find_app(module: ModuleType) -> func.FunctionRegister:
    apps = [value for value in vars(module).values() if isinstance(value, func.FunctionRegister)]
    if len(apps) != 1:
        found = "no" if not apps else f"{len(apps)}"
        raise IndexingError(f"{module.__file__}: {found} FunctionApp instances found; exactly one is required")
    return apps[0]


def import_app_module(app_dir: Path, module_name: str) -> ModuleType:
    """Import `module_name` from `app_dir` afresh, as a new worker process would.

    The worker imports the script as a top-level module once per process. Here several hosts may start in
    one process (tests), so every call executes the module again and replaces the sys.modules entry:
    `FunctionApp.get_functions()` may be called only once per app object, and module state starts clean.
    """
    app_dir = app_dir.resolve()
    path = app_dir / f"{module_name}.py"
    if not path.exists():
        raise IndexingError(f"{path} does not exist")
    if str(app_dir) not in sys.path:
        sys.path.insert(0, str(app_dir))
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise IndexingError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        if previous is None:
            del sys.modules[module_name]
        else:
            sys.modules[module_name] = previous
        raise
    return module


def index_app(app_dir: Path, script_file: str | None = None) -> AppIndex:
    script = script_file or os.environ.get("PYTHON_SCRIPT_FILE_NAME") or "function_app.py"
    module = import_app_module(app_dir, script.removesuffix(".py"))
    app = find_app(module)
    functions = tuple(describe_function(f) for f in app.get_functions())
    return AppIndex(module, app, functions)
