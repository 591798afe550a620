"""The `scheduler` CLI against the real function_app.py under the local host: collections and jobs end to
end, history after `jobs run`, json/table output, one-line errors with the API's code, exit codes, credentials
sent from flags and environment, and the installed console script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

RG, JC = "cli-rg", "cli-jc"


def _job_file(tmp_path: Path, uri: str) -> Path:
    start = (datetime.now(UTC) + timedelta(hours=2)).strftime("%Y-%m-%dT%H:00:00Z")
    path = tmp_path / "job.json"
    path.write_text(
        json.dumps(
            {
                "properties": {
                    "startTime": start,
                    "action": {"type": "Http", "request": {"uri": uri, "method": "GET"}},
                    "recurrence": {
                        "frequency": "Week",
                        "schedule": {"weekDays": ["Monday", "Friday"], "hours": [9], "minutes": [0]},
                        "timeZone": "Europe/London",
                    },
                }
            }
        )
    )
    return path


def test_collections_and_jobs_end_to_end(cli, host_url: str, tmp_path: Path) -> None:
    made = cli("collections", "create", "-g", RG, "-c", JC, "--location", "westus", "--max-jobs", "5")
    assert made.exit_code == 0, made.stderr
    listed = cli("-o", "json", "collections", "list")
    assert [c["name"] for c in json.loads(listed.stdout)] == [JC]
    assert JC in cli("collections", "list").stdout  # the table

    job = _job_file(tmp_path, f"{host_url}/openapi.json")  # the host itself is a real local target
    created = cli("jobs", "create", "-g", RG, "-c", JC, "-n", "ping", "-f", str(job))
    assert created.exit_code == 0, created.stderr
    table = cli("jobs", "list", "-g", RG, "-c", JC)
    assert "ping" in table.stdout and "every Monday and Friday at 09:00" in table.stdout
    shown = json.loads(cli("-o", "json", "jobs", "show", "-g", RG, "-c", JC, "-n", "ping").stdout)
    assert shown["properties"]["state"] == "enabled"
    counts = json.loads(cli("-o", "json", "collections", "show", "-g", RG, "-c", JC).stdout)["jobCounts"]
    assert counts == {"total": 1, "enabled": 1, "disabled": 0, "faulted": 0, "completed": 0}

    assert cli("jobs", "run", "-g", RG, "-c", JC, "-n", "ping").exit_code == 0
    deadline = time.monotonic() + 30
    entries: list = []
    while not entries and time.monotonic() < deadline:
        entries = json.loads(cli("-o", "json", "jobs", "history", "-g", RG, "-c", JC, "-n", "ping").stdout)
        time.sleep(0.3)
    assert [e["properties"]["status"] for e in entries] == ["Completed"]
    history = cli("jobs", "history", "-g", RG, "-c", JC, "-n", "ping")
    assert "Completed" in history.stdout and "Lateness" in history.stdout
    # The message holds the whole response (here the OpenAPI document): cut, saying where it is whole.
    assert len(entries[0]["properties"]["message"]) > 300
    assert "...(-ojsonforall)" in re.sub(r"[\s│]", "", history.stdout)  # however the table folds it

    assert "disabled" in cli("jobs", "disable", "-g", RG, "-c", JC, "-n", "ping").stdout
    assert cli("jobs", "list", "-g", RG, "-c", JC, "--state", "Enabled", "-o", "json").stdout.strip() == "[]"
    assert "enabled" in cli("jobs", "enable", "-g", RG, "-c", JC, "-n", "ping").stdout
    patch = tmp_path / "patch.json"
    patch.write_text('{"properties": {"recurrence": {"interval": 2}}}')
    assert cli("jobs", "update", "-g", RG, "-c", JC, "-n", "ping", "-f", str(patch)).exit_code == 0
    assert "every 2 weeks on Monday and Friday at 09:00" in cli("jobs", "show", "-g", RG, "-c", JC, "-n", "ping").stdout

    assert cli("jobs", "delete", "-g", RG, "-c", JC, "-n", "ping").exit_code != 0  # asks; no answer: aborted
    assert cli("jobs", "delete", "-g", RG, "-c", JC, "-n", "ping", "--yes").exit_code == 0
    assert cli("collections", "disable", "-g", RG, "-c", JC).exit_code == 0
    assert (
        json.loads(cli("-o", "json", "collections", "show", "-g", RG, "-c", JC).stdout)["properties"]["state"]
        == "Disabled"
    )
    assert cli("collections", "enable", "-g", RG, "-c", JC).exit_code == 0
    assert cli("collections", "delete", "-g", RG, "-c", JC, "-y").exit_code == 0
    assert cli("-o", "json", "collections", "list").stdout.strip() == "[]"


def test_errors_are_one_line_with_the_api_code_and_a_reliable_exit_code(cli, tmp_path: Path) -> None:
    missing = cli("jobs", "show", "-g", RG, "-c", "nope", "-n", "x")
    assert missing.exit_code == 1
    assert missing.stderr.startswith("error: ResourceNotFound (HTTP 404): ") and missing.stderr.count("\n") == 1
    assert missing.stderr.endswith(f" (resource group '{RG}', subscription 'cli-sub')\n")
    assert cli("collections", "create", "-g", RG, "-c", "errs", "-l", "westus").exit_code == 0
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"properties": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", '
        '"method": "GET"}}, "recurrence": {"frequency": "Hour", "interval": 0}}}'
    )
    refused = cli("jobs", "create", "-g", RG, "-c", "errs", "-n", "bad", "-f", str(bad))
    assert refused.exit_code == 1 and "BadRequest (HTTP 400): properties.recurrence.interval" in refused.stderr
    bad.write_text("{not json")
    assert cli("jobs", "create", "-g", RG, "-c", "errs", "-n", "bad", "-f", str(bad)).exit_code == 2
    unreachable = cli("--endpoint", "http://127.0.0.1:9/api", "collections", "list")
    assert unreachable.exit_code == 3 and unreachable.stderr.startswith("error: Unreachable: ")
    assert cli("jobs", "list", "-g", RG).exit_code == 2  # usage: -c missing


def test_next_is_offline_through_the_engine(cli) -> None:
    offline = cli(
        "--endpoint",
        "http://127.0.0.1:9/api",
        "-o",
        "json",
        "next",
        "--count",
        "3",
        "--after",
        "2026-03-01T00:00:00Z",
        "-r",
        '{"startTime": "2026-01-01T00:00:00Z", "recurrence": {"frequency": "Month", '
        '"schedule": {"monthlyOccurrences": [{"day": "Monday", "occurrence": 1}], "hours": [8]}}}',
    )
    assert offline.exit_code == 0, offline.stderr
    assert json.loads(offline.stdout) == {
        "description": "every month on the first Monday at 08:00 UTC",
        "occurrences": ["2026-03-02T08:00:00Z", "2026-04-06T08:00:00Z", "2026-05-04T08:00:00Z"],
    }
    wrong = cli("next", "-r", '{"frequency": "Hour", "interval": -1}')
    assert wrong.exit_code == 2 and "properties.recurrence.interval" in wrong.stderr


def test_credentials_from_flags_and_environment_are_sent(cli, http_target) -> None:
    http_target.body = b'{"value": []}'
    endpoint = f"{http_target.url}/api"
    assert (
        cli("--endpoint", endpoint, "--token", "tok-flag", "--functions-key", "key-1", "collections", "list").exit_code
        == 0
    )
    seen = http_target.requests[-1]
    assert seen.headers["authorization"] == "Bearer tok-flag" and seen.headers["x-functions-key"] == "key-1"
    assert seen.path.startswith("/api/subscriptions/cli-sub/providers/Microsoft.Scheduler/jobCollections?")
    env = {
        **os.environ,
        "SCHEDULER_ENDPOINT": endpoint,
        "SCHEDULER_SUBSCRIPTION": "env-sub",
        "SCHEDULER_TOKEN": "tok-env",
    }
    ran = subprocess.run(
        [sys.executable, "-m", "scheduler_cli", "-o", "json", "collections", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert ran.returncode == 0, ran.stderr
    assert http_target.requests[-1].headers["authorization"] == "Bearer tok-env"
    assert "/subscriptions/env-sub/" in http_target.requests[-1].path


def test_the_console_script_is_installed(host_url: str) -> None:
    script = Path(sys.executable).parent / "scheduler"
    assert script.exists(), "`make setup` installs the project (pip install -e .), which creates it"
    ran = subprocess.run(
        [str(script), "--endpoint", host_url, "--subscription", "nobody", "-o", "json", "collections", "list"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0 and json.loads(ran.stdout) == [], ran.stderr
