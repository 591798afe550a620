"""What `scheduler jobs create|update` says about a job that would not run as meant, against the real
function_app.py under the local host: an end already past is saved Completed, as the old service did, with a
warning that the job will never run; a legacy fixed-offset zone (EST) is accepted with a warning naming the zone
people mean; a zone in the wrong case or a Windows zone name is refused naming the IANA zone meant."""

from __future__ import annotations

import json

import pytest

RG, JC = "warn-rg", "warn-jc"
WHERE = ["-g", RG, "-c", JC]
TARGET = ["--uri", "http://127.0.0.1:9/ping"]


@pytest.fixture(scope="module", autouse=True)
def collection(cli) -> None:
    made = cli("collections", "create", *WHERE, "--location", "westeurope")
    assert made.exit_code == 0, made.stderr


def test_a_past_end_is_saved_completed_with_a_warning_that_the_job_never_runs(cli) -> None:
    made = cli("jobs", "create", *WHERE, "-n", "ended", *TARGET, "--every", "1d", "--at", "09:00")
    assert made.exit_code == 0 and made.stderr == "", made.stderr  # no end: no warning
    ended = cli(
        *("jobs", "update", *WHERE, "-n", "ended", "--time-zone", "Europe/Berlin"),
        *("--end", "2020-01-01T12:00"),
    )
    assert ended.exit_code == 0 and "Job ended updated (state completed)." in ended.stdout, ended.stderr
    assert ended.stderr == (
        "warning: its end time, 2020-01-01 12:00:00 Europe/Berlin (11:00:00 UTC), is in the past, so the job will "
        "never run (state completed); set a later end (--end) or none (--end '')\n"
    )
    replaced = cli(
        *("-o", "json", "jobs", "create", *WHERE, "-n", "ended", *TARGET, "--replace"),
        *("--every", "1h", "--end", "2020-01-01T00:00:00Z"),
    )
    assert replaced.exit_code == 0 and json.loads(replaced.stdout)["properties"]["state"] == "completed"
    assert "is in the past, so the job will never run" in replaced.stderr  # -o json warns on stderr too


def test_a_legacy_zone_is_accepted_with_a_warning_naming_the_zone_meant(cli) -> None:
    made = cli("jobs", "create", *WHERE, "-n", "eastern", *TARGET, "--at", "09:00", "--time-zone", "EST")
    assert made.exit_code == 0, made.stderr
    assert made.stderr == ("warning: EST is a fixed UTC-5 with no daylight saving; for New York use America/New_York\n")
    stored = json.loads(cli("-o", "json", "jobs", "show", *WHERE, "-n", "eastern").stdout)
    assert stored["properties"]["recurrence"]["timeZone"] == "EST"  # the wire contract is unchanged
    meant = cli("jobs", "update", *WHERE, "-n", "eastern", "--time-zone", "America/New_York")
    assert meant.exit_code == 0 and meant.stderr == ""


@pytest.mark.parametrize(
    ("zone", "meant"),
    [
        ("europe/berlin", "names are case-sensitive: did you mean 'Europe/Berlin'?"),
        ("W. Europe Standard Time", "a Windows zone name; use its IANA name: did you mean 'Europe/Berlin'?"),
        ("Eastern Standard Time", "a Windows zone name; use its IANA name: did you mean 'America/New_York'?"),
    ],
)
def test_a_zone_in_the_wrong_case_or_a_windows_name_is_refused_naming_the_zone_meant(
    cli, zone: str, meant: str
) -> None:
    refused = cli("jobs", "create", *WHERE, "-n", "refused", *TARGET, "--at", "09:00", "--time-zone", zone)
    assert refused.exit_code == 1 and refused.stdout == ""
    assert refused.stderr.startswith(
        f"error: BadRequest (HTTP 400): properties.recurrence.timeZone: unknown time zone {zone!r}: {meant} ("
    )
    assert refused.stderr.count("\n") == 1
    assert cli("jobs", "show", *WHERE, "-n", "refused").exit_code == 1  # nothing stored
