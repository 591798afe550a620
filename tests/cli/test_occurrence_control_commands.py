"""`scheduler jobs skip|move|add-run|exceptions|unexcept|pause|resume|why` and the `--cron`/`--dst-*` flags
(scheduler_cli/occurrence_control.py, why.py, job_flags.py) against the real function_app.py under the local host:
each command's change shows where the API shows it (the occurrences preview, `jobs show`, the explain
endpoint), and the API's refusals come back as its one-line errors.

Every job here starts a day ahead or more, so nothing fires while a test runs and every exception names an
instant ahead."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

RG, JC = "control-rg", "control-jc"
WHERE = ["-g", RG, "-c", JC]
TARGET = "http://127.0.0.1:9/ping"
START = (datetime.now(UTC) + timedelta(days=2)).replace(hour=0, minute=0, second=0, microsecond=0)


def _z(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


HOURS = [_z(START + timedelta(hours=i)) for i in range(6)]  # the hourly job's first occurrences


@pytest.fixture(scope="module", autouse=True)
def collection(cli) -> None:
    made = cli("collections", "create", *WHERE, "--location", "westeurope")
    assert made.exit_code == 0, made.stderr


def _hourly(cli, name: str) -> list[str]:
    made = cli("jobs", "create", *WHERE, "-n", name, "--uri", TARGET, "--every", "1h", "--start", HOURS[0])
    assert made.exit_code == 0, made.stderr
    return ["-n", name]


def _preview(cli, job: list[str], count: int = 4) -> list[str]:
    shown = cli("-o", "json", "jobs", "occurrences", *WHERE, *job, "--count", str(count))
    assert shown.exit_code == 0, shown.stderr
    return [o["occurrenceTime"] for o in json.loads(shown.stdout)["value"]]


def _properties(cli, job: list[str]) -> dict:
    shown = cli("-o", "json", "jobs", "show", *WHERE, *job)
    assert shown.exit_code == 0, shown.stderr
    return dict(json.loads(shown.stdout)["properties"])


def test_skip_takes_the_occurrence_out_of_the_preview(cli) -> None:
    job = _hourly(cli, "skipped")
    done = cli("jobs", "skip", *WHERE, *job, HOURS[1], "--note", "maintenance")
    assert done.exit_code == 0, done.stderr
    assert f"the occurrence at {START + timedelta(hours=1):%Y-%m-%d %H:%M:%S} UTC is skipped" in done.stdout
    assert _preview(cli, job) == [HOURS[0], HOURS[2], HOURS[3], HOURS[4]]
    assert _properties(cli, job)["exceptions"] == [{"type": "Skip", "occurrence": HOURS[1], "note": "maintenance"}]


def test_an_instant_without_an_offset_is_read_as_utc(cli) -> None:
    job = _hourly(cli, "no-offset")
    assert cli("jobs", "skip", *WHERE, *job, HOURS[2].removesuffix("Z")).exit_code == 0
    assert HOURS[2] not in _preview(cli, job)


def test_skip_next_skips_the_first_occurrence_the_preview_lists(cli) -> None:
    job = _hourly(cli, "skip-next")
    done = cli("jobs", "skip", *WHERE, *job, "--next")
    assert done.exit_code == 0, done.stderr
    assert _preview(cli, job, 2) == [HOURS[1], HOURS[2]]
    both = cli("jobs", "skip", *WHERE, *job, HOURS[3], "--next")
    assert both.exit_code == 2 and "OCCURRENCE to skip or --next" in both.stderr


def test_skip_of_an_instant_that_is_no_occurrence_shows_the_nearest_ones(cli) -> None:
    job = _hourly(cli, "not-one")
    between = _z(START + timedelta(hours=1, minutes=30))
    refused = cli("jobs", "skip", *WHERE, *job, between)
    assert refused.exit_code == 1
    assert refused.stderr.startswith("error: BadRequest (HTTP 400)"), refused.stderr
    assert f"{between} is not an occurrence of the job" in refused.stderr
    assert HOURS[1] in refused.stderr and HOURS[2] in refused.stderr
    assert "exceptions" not in _properties(cli, job)  # nothing written


def test_move_runs_the_occurrence_at_its_new_instant_instead(cli) -> None:
    job = _hourly(cli, "moved")
    later = _z(START + timedelta(hours=1, minutes=20))
    done = cli("jobs", "move", *WHERE, *job, HOURS[1], "--to", later, "--note", "after the deploy")
    assert done.exit_code == 0, done.stderr
    assert "is moved to" in done.stdout
    assert _preview(cli, job) == [HOURS[0], later, HOURS[2], HOURS[3]]
    moved_again = _z(START + timedelta(hours=1, minutes=40))
    assert cli("jobs", "move", *WHERE, *job, HOURS[1], "--to", moved_again).exit_code == 0
    assert _properties(cli, job)["exceptions"] == [{"type": "Move", "occurrence": HOURS[1], "moveTo": moved_again}]


def test_add_run_adds_an_extra_occurrence(cli) -> None:
    job = _hourly(cli, "extra")
    extra = _z(START + timedelta(minutes=15))
    done = cli("jobs", "add-run", *WHERE, *job, extra, "--note", "one more")
    assert done.exit_code == 0, done.stderr
    assert _preview(cli, job, 3) == [HOURS[0], extra, HOURS[1]]


def test_exceptions_lists_type_occurrence_target_and_note(cli) -> None:
    job = _hourly(cli, "listed")
    later = _z(START + timedelta(hours=2, minutes=5))
    assert cli("jobs", "skip", *WHERE, *job, HOURS[1], "--note", "holiday").exit_code == 0
    assert cli("jobs", "move", *WHERE, *job, HOURS[2], "--to", later).exit_code == 0
    assert cli("jobs", "add-run", *WHERE, *job, _z(START + timedelta(hours=3, minutes=30))).exit_code == 0
    table = cli("jobs", "exceptions", *WHERE, *job)
    assert table.exit_code == 0, table.stderr
    rows = [line.split("│") for line in table.stdout.splitlines() if line.count("│") == 5]
    cells = [[cell.strip() for cell in row[1:-1]] for row in rows]
    day = f"{START:%Y-%m-%d}"
    assert "Type" in table.stdout and "Moved to" in table.stdout and "Note" in table.stdout
    assert cells == [
        ["Skip", f"{day} 01:00:00 UTC", "-", "holiday"],
        ["Move", f"{day} 02:00:00 UTC", f"{day} 02:05:00 UTC", "-"],
        ["Add", f"{day} 03:30:00 UTC", "-", "-"],
    ]
    listed = json.loads(cli("-o", "json", "jobs", "exceptions", *WHERE, *job).stdout)
    assert [e["type"] for e in listed] == ["Skip", "Move", "Add"]


def test_unexcept_cancels_the_exception_naming_the_instant(cli) -> None:
    job = _hourly(cli, "cancelled")
    later = _z(START + timedelta(hours=2, minutes=10))
    assert cli("jobs", "skip", *WHERE, *job, HOURS[1]).exit_code == 0
    assert cli("jobs", "move", *WHERE, *job, HOURS[2], "--to", later).exit_code == 0
    done = cli("jobs", "unexcept", *WHERE, *job, HOURS[1])
    assert done.exit_code == 0, done.stderr
    assert "is cancelled" in done.stdout
    by_target = cli("jobs", "unexcept", *WHERE, *job, later)  # a move is named by its target too
    assert by_target.exit_code == 0, by_target.stderr
    assert _preview(cli, job) == HOURS[:4]
    assert _properties(cli, job)["exceptions"] == []
    none = cli("jobs", "unexcept", *WHERE, *job, HOURS[3])
    assert none.exit_code == 1
    assert none.stderr.startswith("error: NoSuchException: no exception of job cancelled names"), none.stderr


def test_pause_for_a_duration_shows_on_jobs_show_until_resume(cli) -> None:
    job = _hourly(cli, "paused")
    before = datetime.now(UTC)
    done = cli("jobs", "pause", *WHERE, *job, "--until", "PT2H", "--note", "target upgrade")
    assert done.exit_code == 0, done.stderr
    pause = _properties(cli, job)["pause"]
    until = datetime.fromisoformat(pause["until"].replace("Z", "+00:00"))
    assert before + timedelta(hours=2) - timedelta(seconds=1) <= until <= datetime.now(UTC) + timedelta(hours=2)
    assert pause["note"] == "target upgrade"
    shown = cli("jobs", "show", *WHERE, *job)
    assert shown.exit_code == 0, shown.stderr
    assert f"until {until:%Y-%m-%d %H:%M:%S} UTC (target upgrade)" in shown.stdout
    assert "exceptions" in shown.stdout

    resumed = cli("jobs", "resume", *WHERE, *job)
    assert resumed.exit_code == 0 and "is resumed" in resumed.stdout, resumed.stderr
    assert "pause" not in _properties(cli, job)
    assert "target upgrade" not in cli("jobs", "show", *WHERE, *job).stdout
    again = cli("jobs", "resume", *WHERE, *job)
    assert again.exit_code == 0 and "is not paused" in again.stdout


def test_pause_until_an_instant_past_is_refused_by_the_api(cli) -> None:
    job = _hourly(cli, "pause-past")
    refused = cli("jobs", "pause", *WHERE, *job, "--until", "2020-01-01T00:00:00Z")
    assert refused.exit_code == 1 and "until must be later than now" in refused.stderr, refused.stderr
    wrong = cli("jobs", "pause", *WHERE, *job, "--until", "tomorrow")
    assert wrong.exit_code == 2 and wrong.stderr.startswith("error: InvalidOption: --until 'tomorrow'")


def test_cron_creates_a_job_that_shows_its_expression(cli) -> None:
    job = ["-n", "weekdays"]
    schedule = ["--cron", "0 9 * * 1-5", "--time-zone", "Europe/Berlin", "--dst-gap", "skip", "--dst-fold", "Both"]
    made = cli("jobs", "create", *WHERE, *job, "--uri", TARGET, *schedule)
    assert made.exit_code == 0, made.stderr
    recurrence = _properties(cli, job)["recurrence"]
    assert recurrence["cron"] == "0 9 * * 1-5" and "frequency" not in recurrence
    assert recurrence["dstPolicy"] == {"gap": "Skip", "fold": "Both"}
    shown = cli("jobs", "show", *WHERE, *job)
    assert "cron '0 9 * * 1-5'" in shown.stdout and "gap Skip, fold Both" in shown.stdout
    fires = [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in _preview(cli, job, 5)]
    assert all(t.weekday() < 5 for t in fires)

    mixed = cli("jobs", "update", *WHERE, *job, "--cron", "0 10 * * *", "--every", "1d")
    assert mixed.exit_code == 2 and mixed.stderr.startswith("error: InvalidOption: --cron '0 10 * * *'")
    hourly = cli("jobs", "update", *WHERE, *job, "--every", "1h")  # a calendar schedule replaces the cron
    assert hourly.exit_code == 0, hourly.stderr
    recurrence = _properties(cli, job)["recurrence"]
    assert "cron" not in recurrence and recurrence["frequency"].lower() == "hour"


def test_a_dst_policy_without_a_time_zone_is_refused_by_the_api(cli) -> None:
    refused = cli("jobs", "create", *WHERE, "-n", "no-zone", "--uri", TARGET, "--every", "1d", "--dst-gap", "Skip")
    assert refused.exit_code == 1 and "dstPolicy needs a timeZone" in refused.stderr, refused.stderr


def test_why_a_future_occurrence_will_run(cli) -> None:
    job = _hourly(cli, "why-run")
    asked = cli("jobs", "why", *WHERE, *job, HOURS[2])
    assert asked.exit_code == 0, asked.stderr
    assert "WillRun" in asked.stdout
    answer = json.loads(cli("-o", "json", "jobs", "why", *WHERE, *job, HOURS[2]).stdout)
    assert answer["occurrenceTime"] == HOURS[2] and answer["verdict"] == "WillRun" and answer["isOccurrence"]


def test_why_a_skipped_occurrence_will_not_run(cli) -> None:
    job = _hourly(cli, "why-skip")
    assert cli("jobs", "skip", *WHERE, *job, HOURS[2], "--note", "holiday").exit_code == 0
    asked = cli("jobs", "why", *WHERE, *job, HOURS[2])
    assert asked.exit_code == 0, asked.stderr
    assert "WillNotRun" in asked.stdout and "Excepted" in asked.stdout and "holiday" in asked.stdout
    between = cli("jobs", "why", *WHERE, *job, _z(START + timedelta(minutes=30)))
    assert between.exit_code == 0 and "NotAnOccurrence" in between.stdout
    assert f"{START:%Y-%m-%d} 00:00:00 UTC" in between.stdout and f"{START:%Y-%m-%d} 01:00:00 UTC" in between.stdout
