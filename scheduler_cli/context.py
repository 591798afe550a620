"""Global options of every command (endpoint, subscription, credentials, output), from flags or environment,
and the error boundaries: a CliError, and a usage error Click would print as a boxed block, both become one
stderr line and an exit code."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import typer
from typer.core import TyperGroup

from .client import USAGE_ERROR, ApiClient, CliError
from .output import error_line
from .times import job_zone

try:  # recent Typer ships its own copy of Click and does not re-export UsageError; older Typer runs on Click
    from typer._click import Context
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover - depends on the installed Typer
    from click import Context  # type: ignore[no-redef,import-not-found,unused-ignore]
    from click.exceptions import UsageError  # type: ignore[no-redef,import-not-found,unused-ignore]

F = TypeVar("F", bound=Callable[..., Any])


class Output(str, Enum):
    table = "table"
    json = "json"


@dataclass
class Options:
    endpoint: str
    subscription: str | None
    token: str | None
    functions_key: str | None
    output: Output
    times_in: str | None = None  # --times-in: every time shown in this zone ("UTC" for UTC); None: each job's

    def zone(self, job: Any) -> str | None:
        """Where a job's times are shown: --times-in, else the job's own zone (None: UTC)."""
        return None if self.times_in == "UTC" else self.times_in or job_zone(job)

    def client(self) -> ApiClient:
        return ApiClient(self.endpoint, self.token, self.functions_key)

    def require_subscription(self) -> str:
        if not self.subscription:
            raise CliError("MissingSubscription", "pass --subscription or set SCHEDULER_SUBSCRIPTION", USAGE_ERROR)
        return self.subscription

    @property
    def json(self) -> bool:
        return self.output is Output.json


def options(ctx: typer.Context) -> Options:
    found = ctx.find_object(Options)
    assert found is not None, "the root callback stores the options"
    return found


# The same option after the subcommand (`scheduler jobs list ... -o json`); None keeps the global one.
_OUTPUT_AFTER = inspect.Parameter(
    "output",
    inspect.Parameter.KEYWORD_ONLY,
    annotation=Output | None,
    default=typer.Option(
        None, "--output", "-o", metavar="table|json", help="table or json (also accepted before the command)."
    ),
)


def guarded(command: F) -> F:
    """Every command goes through this. It takes `--output/-o` too, so the option works before and after the
    subcommand; and a CliError becomes `error: CODE (HTTP n): message` on stderr with its exit code."""

    @functools.wraps(command)
    def wrapper(*args: Any, output: Output | None = None, **kwargs: Any) -> Any:
        if output is not None:
            options(kwargs["ctx"]).output = output
        try:
            return command(*args, **kwargs)
        except CliError as error:
            error_line(error.lines())
            raise typer.Exit(error.exit_code) from None

    # Typer builds a command's options from its signature: the command's own, plus --output.
    signature = inspect.signature(command, eval_str=True)
    assert "ctx" in signature.parameters, f"{command.__name__} needs `ctx: typer.Context`"
    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), _OUTPUT_AFTER]
    )
    wrapper.__annotations__ = {**command.__annotations__, "output": Output | None}
    return wrapper  # type: ignore[return-value]


@contextmanager
def _one_line_usage_errors() -> Iterator[None]:
    try:
        yield
    except UsageError as error:
        if type(error).__name__ == "NoArgsIsHelpError":  # the help it stands for is already printed
            raise
        where = f" (see '{error.ctx.command_path} --help')" if error.ctx is not None else ""
        message = " ".join(error.format_message().split())  # one line, whatever Click's wording
        error_line(f"error: {type(error).__name__}: {message}{where}")
        raise typer.Exit(error.exit_code) from None


# What a date-time option takes: Click's own formats, and ISO 8601 with a zone (`Z`, `+01:00`) as the API writes.
TIME_FORMATS = [
    "%Y-%m-%d",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M:%S%z",
    "%Y-%m-%dT%H:%M:%S.%f%z",
]


# What help shows after an option that takes a value, when the option names none itself (Typer would show the
# Python type: <str>, <list[str]>); a flag shows nothing after its name.
_METAVARS = {"str": "TEXT", "int": "N", "Path": "FILE", "datetime": "TIME"}


def _plain_help(command: Any) -> None:
    """Help in plain words: flags bare (`--what-if`, `--help`), values named (`-g GROUP`, `--count N`)."""
    params = list(getattr(command, "params", []))
    help_option = command.get_help_option(Context(command))
    for param in [*params, *([help_option] if help_option is not None else [])]:
        if getattr(param, "is_flag", False) or getattr(param, "is_bool_flag", False):
            param.metavar = ""
        elif param.metavar is None and param.param_type_name == "option":
            annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
            param.metavar = _METAVARS.get(getattr(annotation, "__name__", ""), "VALUE")
    for child in (getattr(command, "commands", None) or {}).values():
        _plain_help(child)


class OneLineErrors(TyperGroup):
    """The root group: a usage error (unknown option, missing or invalid value) is one stderr line like every
    other error, `error: NoSuchOption: No such option: -x (see 'scheduler jobs list --help')`, exit code 2.

    Sub-groups and commands parse their arguments inside the root's `invoke`, so this covers them all."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        if parent is None:
            _plain_help(self)
        with _one_line_usage_errors():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        with _one_line_usage_errors():
            return super().invoke(ctx)


def read_json(path: Path) -> Any:
    """A JSON file, or `-` for standard input; a CliError naming the file when it is not JSON."""
    try:
        text = typer.get_text_stream("stdin").read() if str(path) == "-" else path.read_text("utf-8")
    except OSError as error:
        raise CliError("InvalidFile", f"{path}: {error.strerror or error}", USAGE_ERROR) from None
    try:
        return json.loads(text)
    except ValueError as error:
        raise CliError("InvalidJson", f"{path}: {error}", USAGE_ERROR) from None
