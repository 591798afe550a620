"""The CLI tests drive the `scheduler` command (in-process through Typer's runner, and once as the installed
console script) against the real function_app.py under the local host, one host per module."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from scheduler_cli.main import app
from tests.support.local_host import local_host


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


@dataclass
class Cli:
    endpoint: str
    subscription: str = "cli-sub"

    def __call__(self, *args: str, stdin: str | None = None) -> Result:
        runner = CliRunner()
        result = runner.invoke(
            app,
            ["--endpoint", self.endpoint, "--subscription", self.subscription, *args],
            input=stdin,
            catch_exceptions=False,
        )
        return Result(result.exit_code, result.stdout, result.stderr)


@pytest.fixture(scope="module")
def host_url(azurite) -> Iterator[str]:
    with local_host(azurite) as base:
        yield base


@pytest.fixture(scope="module")
def cli(host_url: str) -> Cli:
    return Cli(host_url)
