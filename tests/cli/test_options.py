"""The `scheduler` command's global options without a host: `--output` before and after any subcommand, usage
errors as one stderr line with exit code 2, the Functions key from SCHEDULER_FUNCTIONS_KEY, and the default
endpoint. A local stand-in server records what the CLI sends."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
import typer
from typer.testing import CliRunner

from scheduler_cli.main import app

JOBS = {"value": [{"name": "cc/ping", "properties": {"state": "Enabled", "status": {"executionCount": 3}}}]}
ENVIRONMENT = ("SCHEDULER_ENDPOINT", "SCHEDULER_SUBSCRIPTION", "SCHEDULER_TOKEN", "SCHEDULER_FUNCTIONS_KEY")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own SCHEDULER_* settings must not leak into what these tests check."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)


def _leaf_commands(command: Any, path: str = "scheduler") -> list[tuple[str, Any]]:
    children = getattr(command, "commands", None)
    if not children:
        return [(path, command)]
    return [leaf for name, child in children.items() for leaf in _leaf_commands(child, f"{path} {name}")]


def test_every_command_takes_output_after_its_name() -> None:
    leaves = _leaf_commands(typer.main.get_command(app))
    # collections 8, jobs 21, next, import, export, doctor, local 2, dead-letters 4, destinations
    assert len(leaves) == 40
    for path, command in leaves:
        declared = {opt for param in command.params for opt in getattr(param, "opts", [])}
        assert {"--output", "-o"} <= declared, path


def test_output_is_accepted_before_and_after_the_subcommand(http_target) -> None:
    http_target.body = json.dumps(JOBS).encode()
    base = ("--endpoint", f"{http_target.url}/api", "-s", "sub")
    listing = ("jobs", "list", "-g", "rg", "-c", "cc")
    for args in (
        (*base, *listing, "-o", "json"),
        (*base, *listing, "--output", "json"),
        (*base, "-o", "json", *listing),
    ):
        ran = invoke(*args)
        assert ran.exit_code == 0, ran.stderr
        assert json.loads(ran.stdout) == JOBS["value"], args
    after_wins = invoke(*base, "-o", "json", *listing, "-o", "table")
    assert after_wins.exit_code == 0 and "Jobs of cc" in after_wins.stdout and "ping" in after_wins.stdout
    offline = invoke("next", "-r", '{"frequency": "Day"}', "--count", "2", "-o", "json")
    assert offline.exit_code == 0 and len(json.loads(offline.stdout)["occurrences"]) == 2


@pytest.mark.parametrize(
    ("args", "kind", "words"),
    [
        (("jobs", "list", "-g", "rg", "-c", "cc", "--bogus"), "NoSuchOption", "--bogus"),
        (("jobs", "list", "-g", "rg", "-c", "cc", "-o", "xml"), "BadParameter", "'xml'"),
        (("jobs", "list", "-g", "rg"), "MissingParameter", "--collection"),
        (("jobz", "list"), "UsageError", "Did you mean 'jobs'?"),
        (("next", "--count", "0", "-r", "{}"), "BadParameter", "--count"),
    ],
)
def test_usage_errors_are_one_line_with_exit_code_2(args: tuple[str, ...], kind: str, words: str) -> None:
    ran = invoke("--endpoint", "http://127.0.0.1:9/api", "-s", "sub", *args)
    assert ran.exit_code == 2
    assert ran.stderr.startswith(f"error: {kind}: ") and ran.stderr.count("\n") == 1, ran.stderr
    assert words in ran.stderr and "--help')" in ran.stderr
    assert ran.stdout == ""


def test_the_functions_key_comes_from_the_environment_and_the_flag_wins(http_target) -> None:
    http_target.body = b'{"value": []}'
    env = {
        "SCHEDULER_ENDPOINT": f"{http_target.url}/api",
        "SCHEDULER_SUBSCRIPTION": "env-sub",
        "SCHEDULER_FUNCTIONS_KEY": "key-from-env",
    }
    assert invoke("collections", "list", env=env).exit_code == 0
    seen = http_target.requests[-1]
    assert seen.headers["x-functions-key"] == "key-from-env" and "authorization" not in seen.headers
    assert seen.path.startswith("/api/subscriptions/env-sub/providers/Microsoft.Scheduler/jobCollections?")
    assert invoke("--functions-key", "key-from-flag", "collections", "list", env=env).exit_code == 0
    assert http_target.requests[-1].headers["x-functions-key"] == "key-from-flag"


def test_the_default_endpoint_is_the_local_host(monkeypatch: pytest.MonkeyPatch) -> None:
    # Whatever listens on 7071 on this machine (someone's `make run`) must not answer: record and refuse.
    asked: list[str] = []

    def refuse(self: requests.Session, method: str, url: str, **kwargs: Any) -> requests.Response:
        asked.append(url)
        raise requests.ConnectionError("refused by the test")

    monkeypatch.setattr(requests.Session, "request", refuse)
    ran = invoke("-s", "sub", "collections", "list")
    assert ran.exit_code == 3
    assert ran.stderr == (
        "error: Unreachable: nothing answers at http://127.0.0.1:7071/api: is `make run` running? "
        "(or set SCHEDULER_ENDPOINT)\n"
    )
    assert asked == ["http://127.0.0.1:7071/api/subscriptions/sub/providers/Microsoft.Scheduler/jobCollections"]


def test_help_names_values_plainly_and_shows_one_example_per_command() -> None:
    for path, _ in _leaf_commands(typer.main.get_command(app)):
        shown = invoke(*path.split()[1:], "--help")
        assert shown.exit_code == 0, path
        text = " ".join(shown.stdout.split())
        assert f"Example: {path} " in text, path  # e.g. "Example: scheduler jobs list -g my-rg -c my-jobs"
        for typed in ("<bool>", "<str>", "<int>", "<list[", "<datetime>"):
            assert typed not in text, (path, typed)
    imported = " ".join(invoke("import", "--help").stdout.split())
    assert "--what-if Only say" in imported and "--set PATH=VALUE" in imported and "-p NAME=VALUE" in imported


def test_a_404_without_an_api_error_asks_about_the_endpoint(http_target) -> None:
    http_target.status, http_target.body = 404, b""
    without_api = invoke("--endpoint", http_target.url, "-s", "sub", "collections", "list")
    assert without_api.exit_code == 1
    assert without_api.stderr == (
        f"error: HttpError (HTTP 404): {http_target.url} answered 404 without an API error: "
        "is /api missing from SCHEDULER_ENDPOINT?\n"
    )
    elsewhere = invoke("--endpoint", f"{http_target.url}/other", "-s", "sub", "collections", "list")
    assert "is SCHEDULER_ENDPOINT the scheduler's API (as http://127.0.0.1:7071/api)?" in elsewhere.stderr
