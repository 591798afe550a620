"""Function indexing the way the Python worker does it (v2 programming model).

Contract: `index_app(app_dir)` imports the app module (`function_app`, or PYTHON_SCRIPT_FILE_NAME without
".py") with `app_dir` first on sys.path, finds the single module attribute that is a `func.FunctionRegister`
(FunctionApp, AsgiFunctionApp, ...), calls `get_functions()` and describes every function as a
`FunctionInfo`. Anything the local host cannot run faithfully fails here, loudly: triggers other than
http/timer/queue, bindings other than the HTTP and queue outputs, and Python parameters that do not match a
binding (the worker refuses those too). Values are as declared (`%Setting%` references unresolved).
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
from azure.functions.decorators.core import BindingDirection

HTTP_TRIGGER = "httpTrigger"
TIMER_TRIGGER = "timerTrigger"
QUEUE_TRIGGER = "queueTrigger"
SUPPORTED_TRIGGERS = (HTTP_TRIGGER, TIMER_TRIGGER, QUEUE_TRIGGER)
SUPPORTED_OUTPUTS = ("http", "queue")
RETURN_BINDING = "$return"
CONTEXT_PARAMETER = "context"


class IndexingError(RuntimeError):
    """The app cannot be hosted as declared."""


def _text(value: Any) -> str:
    """Enum members (HttpMethod, AuthLevel) as their wire value; everything else as str."""
    return str(getattr(value, "value", value))


@dataclass(frozen=True)
class OutputBinding:
    """An output binding: `$return` or the name of a `func.Out` parameter."""

    name: str
    type: str
    queue_name: str | None = None
    connection: str | None = None


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
    queue_name: str | None = None
    connection: str | None = None
    outputs: tuple[OutputBinding, ...] = ()

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.user_function)

    @property
    def wants_context(self) -> bool:
        return CONTEXT_PARAMETER in inspect.signature(self.user_function).parameters

    def describe(self) -> dict[str, Any]:
        """Name, trigger type and what triggers it: route+methods (None = all), schedule, or queue."""
        described: dict[str, Any] = {"name": self.name, "trigger": self.trigger_type}
        if self.trigger_type == HTTP_TRIGGER:
            described |= {"route": self.route, "methods": self.methods}
        elif self.trigger_type == TIMER_TRIGGER:
            described |= {"schedule": self.schedule, "run_on_startup": self.run_on_startup}
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
    outputs = []
    for binding in function.get_bindings():
        if binding is trigger:
            continue
        if binding.type not in SUPPORTED_OUTPUTS or binding.direction != BindingDirection.OUT.value:
            raise IndexingError(
                f"function {name!r}: binding {binding.name!r} of type {binding.type!r} is not supported by the "
                f"local host (supported outputs: {', '.join(SUPPORTED_OUTPUTS)})"
            )
        outputs.append(OutputBinding(binding.name, binding.type, getattr(binding, "queue_name", None),
                                     getattr(binding, "connection", None)))
    common: dict[str, Any] = {
        "name": name, "trigger_type": trigger_type, "trigger_parameter": trigger.name,
        "user_function": function.get_user_function(), "outputs": tuple(outputs),
    }
    if trigger_type == HTTP_TRIGGER:
        methods = getattr(trigger, "methods", None)
        info = FunctionInfo(
            **common, route=getattr(trigger, "route", None) or name,
            methods=None if methods is None else tuple(_text(m).upper() for m in methods),
            auth_level=None if trigger.auth_level is None else _text(trigger.auth_level),
        )
    elif trigger_type == TIMER_TRIGGER:
        info = FunctionInfo(**common, schedule=trigger.schedule, run_on_startup=bool(trigger.run_on_startup))
    else:
        info = FunctionInfo(**common, queue_name=trigger.queue_name, connection=trigger.connection)
    _check_parameters(info)
    return info


def _check_parameters(info: FunctionInfo) -> None:
    """The worker's rule: every Python parameter is a binding or `context`, every binding has a parameter."""
    params = set(inspect.signature(info.user_function).parameters) - {CONTEXT_PARAMETER}
    bindings = {info.trigger_parameter} | {o.name for o in info.outputs if o.name != RETURN_BINDING}
    if params != bindings:
        raise IndexingError(
            f"function {info.name!r}: Python parameters {sorted(params)} do not match its bindings "
            f"{sorted(bindings)} (plus an optional 'context')"
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
