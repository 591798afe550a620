"""Times as the CLI shows them (scheduler_cli/times.py): in the job's own time zone with UTC beside, else UTC,
always labelled, in the one format the console shows too (zones.js, run by node here, as Azurite is); `--times-in`
(or SCHEDULER_TIMES_IN) shows them all in UTC or another zone, and refuses an unknown zone in one line naming
the zone meant. Against the real function_app.py under the local host: show, list, occurrences and ledger."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scheduler_cli.main import app
from scheduler_cli.times import labelled

ZONES_JS = Path(__file__).resolve().parents[2] / "shared" / "console" / "static" / "zones.js"
RG, JC = "times-rg", "times-jc"
WHERE = ["-g", RG, "-c", JC]

CASES = [
    ("2026-03-29T07:00:00Z", "Europe/Berlin", "2026-03-29 09:00:00 Europe/Berlin (07:00:00 UTC)"),  # first CEST day
    ("2026-03-28T08:00:00Z", "Europe/Berlin", "2026-03-28 09:00:00 Europe/Berlin (08:00:00 UTC)"),
    ("2026-03-29T17:00:00Z", "Pacific/Auckland", "2026-03-30 06:00:00 Pacific/Auckland (2026-03-29 17:00:00 UTC)"),
    ("2026-11-01T05:30:00Z", "America/New_York", "2026-11-01 01:30:00 America/New_York (05:30:00 UTC)"),  # fold
    ("2026-11-01T06:30:00Z", "America/New_York", "2026-11-01 01:30:00 America/New_York (06:30:00 UTC)"),
    ("2026-03-29T07:00:00.250Z", "Asia/Kolkata", "2026-03-29 12:30:00 Asia/Kolkata (07:00:00 UTC)"),
    ("2026-03-29T09:00:00+02:00", "Europe/London", "2026-03-29 08:00:00 Europe/London (07:00:00 UTC)"),
    ("2026-03-29T07:00:00Z", None, "2026-03-29 07:00:00 UTC"),
    ("2026-03-29T07:00:00Z", "UTC", "2026-03-29 07:00:00 UTC"),
    ("2026-03-29T07:00:00Z", "Mars/Olympus_Mons", "2026-03-29 07:00:00 UTC"),  # a zone not known: UTC, said so
]


@pytest.mark.parametrize(("instant", "zone", "shown"), CASES)
def test_an_instant_is_shown_in_its_zone_with_utc_beside(instant: str, zone: str | None, shown: str) -> None:
    assert labelled(instant, zone) == shown


def test_the_cli_and_the_console_show_an_instant_alike() -> None:
    script = (
        f"import {{ zoned }} from {json.dumps(ZONES_JS.as_uri())};"
        "const cases = JSON.parse(process.env.CASES);"
        "process.stdout.write(JSON.stringify(cases.map(([at, zone]) => zoned(at, zone))));"
    )
    ran = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        env={**os.environ, "CASES": json.dumps([[at, zone] for at, zone, _ in CASES])},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert json.loads(ran.stdout) == [labelled(at, zone) for at, zone, _ in CASES]


def _next(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    ran = CliRunner().invoke(app, [*args], env=env, catch_exceptions=False)
    return ran.exit_code, ran.stdout, ran.stderr


NEXT = ["next", "--every", "1d", "--at", "09:00", "--time-zone", "Europe/Berlin", "--count", "2"]
NEXT += ["--start", "2026-03-28T00:00", "--after", "2026-03-28T00:00:00Z"]


def test_next_shows_the_schedules_zone_unless_told_another() -> None:
    code, out, _ = _next(*NEXT)
    assert code == 0
    assert "2026-03-28 09:00:00 Europe/Berlin (08:00:00 UTC)" in out
    assert "2026-03-29 09:00:00 Europe/Berlin (07:00:00 UTC)" in out
    code, out, _ = _next("--times-in", "UTC", *NEXT)
    assert code == 0 and "2026-03-29 07:00:00 UTC" in out and "Europe/Berlin (" not in out
    code, out, _ = _next(*NEXT, env={"SCHEDULER_TIMES_IN": "America/New_York"})
    assert code == 0 and "2026-03-29 03:00:00 America/New_York (07:00:00 UTC)" in out
    code, out, _ = _next("-o", "json", *NEXT)
    assert json.loads(out)["occurrences"] == ["2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z"]  # JSON: the API's UTC


@pytest.mark.parametrize(
    ("zone", "meant"), [("europe/berlin", "'Europe/Berlin'"), ("W. Europe Standard Time", "'Europe/Berlin'")]
)
def test_an_unknown_display_zone_is_one_line_naming_the_zone_meant(zone: str, meant: str) -> None:
    code, out, err = _next("--times-in", zone, *NEXT)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: BadParameter: ") and f"did you mean {meant}?" in err


@pytest.fixture(scope="module")
def berlin_job(cli, host_url: str) -> list[str]:
    assert cli("collections", "create", *WHERE, "--location", "westeurope").exit_code == 0
    start = (datetime.now(UTC) - timedelta(days=2)).strftime("%Y-%m-%dT00:00")
    made = cli(
        *("jobs", "create", *WHERE, "-n", "berlin", "--uri", f"{host_url}/openapi.json"),
        *("--every", "1d", "--at", "09:00", "--time-zone", "Europe/Berlin", "--start", start),
    )
    assert made.exit_code == 0, made.stderr
    return [*WHERE, "-n", "berlin"]


def _berlin_times(text: str) -> list[str]:
    return re.findall(r"\d{4}-\d\d-\d\d 09:00:00 Europe/Berlin \((?:0[78]):00:00 UTC\)", text)


def test_show_list_and_occurrences_use_the_jobs_zone(cli, berlin_job: list[str]) -> None:
    shown = cli("jobs", "show", *berlin_job)
    assert shown.exit_code == 0, shown.stderr
    assert re.search(r"start time\s+\d{4}-\d\d-\d\d 00:00:00 Europe/Berlin \(", shown.stdout), shown.stdout
    assert re.search(r"next run\s+\d{4}-\d\d-\d\d 09:00:00 Europe/Berlin \(", shown.stdout), shown.stdout
    listed = cli("jobs", "list", *WHERE)
    assert listed.exit_code == 0 and _berlin_times(_column(listed.stdout, 4)), listed.stdout
    upcoming = cli("jobs", "occurrences", *berlin_job, "--count", "3")
    assert upcoming.exit_code == 0, upcoming.stderr
    assert [len(_berlin_times(_column(upcoming.stdout, i))) for i in (1, 2)] == [3, 3], upcoming.stdout  # occurs, fires
    forced = cli("--times-in", "UTC", "jobs", "occurrences", *berlin_job, "--count", "3")
    assert forced.exit_code == 0 and "Europe/Berlin (" not in forced.stdout
    assert len(re.findall(r"\d{4}-\d\d-\d\d 0[78]:00:00 UTC", forced.stdout)) == 6, forced.stdout


def test_the_ledger_shows_occurrences_and_starts_in_the_jobs_zone(cli, berlin_job: list[str]) -> None:
    since = (datetime.now(UTC) - timedelta(days=1, hours=12)).strftime("%Y-%m-%dT%H:%M:%SZ")
    until = (datetime.now(UTC) - timedelta(hours=12)).strftime("%Y-%m-%dT%H:%M:%SZ")
    queued = cli("jobs", "backfill", *berlin_job, "--from", since, "--to", until)
    assert queued.exit_code == 0 and _berlin_times(_column(queued.stdout, 0)), queued.stdout
    assert "Europe/Berlin (" in _column(queued.stdout, 1), queued.stdout  # it fires now
    deadline = time.monotonic() + 60
    while not json.loads(cli("-o", "json", "jobs", "ledger", *berlin_job).stdout) and time.monotonic() < deadline:
        time.sleep(0.5)  # the backfilled occurrence is in the ledger once it has run
    ledger = cli("jobs", "ledger", *berlin_job)
    assert ledger.exit_code == 0 and "Occurrence (UTC)" not in ledger.stdout
    assert _berlin_times(_column(ledger.stdout, 0)), ledger.stdout
    started = r"(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d Europe/Berlin \((\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d UTC\)"
    assert re.fullmatch(started, _column(ledger.stdout, 5)), ledger.stdout


def _column(table: str, index: int) -> str:
    """A table's column as one line: the cells' lines, wrapped at their spaces, joined again."""
    cells = [line.split("│")[index + 1].strip() for line in table.splitlines() if line.startswith("│")]
    return " ".join(cell for cell in cells if cell)
