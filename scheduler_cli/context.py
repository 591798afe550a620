"""Global options of every command (endpoint, subscription, credentials, output), from flags or environment,
and the error boundary that turns a CliError into one stderr line and its exit code."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import typer

from .client import USAGE_ERROR, ApiClient, CliError
from .output import error_line

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


def guarded(command: F) -> F:
    """Every command body runs inside this: a CliError becomes `error: CODE (HTTP n): message` on stderr."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except CliError as error:
            error_line(error.line())
            raise typer.Exit(error.exit_code) from None

    return wrapper  # type: ignore[return-value]


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
