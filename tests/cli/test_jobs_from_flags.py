"""`scheduler jobs create|update` build a job from flags (scheduler_cli/job_flags.py) against the real
function_app.py under the local host: a job from flags reads back equal to the same job from JSON; over a file
the flags win member by member; `update` flags change only their members; schedules of every N minutes, hours
and days at times in a time zone fire where the API's occurrences preview and `scheduler next` put them; and
contradictory or incomplete flags are one error line, exit code 2, with nothing stored."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

RG, JC = "flags-rg", "flags-jc"
WHERE = ["-g", RG, "-c", JC]


@pytest.fixture(scope="module", autouse=True)
def collection(cli) -> None:
    made = cli("collections", "create", *WHERE, "--location", "westeurope")
    assert made.exit_code == 0, made.stderr


def _properties(cli, name: str) -> dict:
    shown = cli("-o", "json", "jobs", "show", *WHERE, "-n", name)
    assert shown.exit_code == 0, shown.stderr
    properties = json.loads(shown.stdout)["properties"]
    properties.pop("status", None)
    return properties


def _created(cli, name: str, *args: str) -> None:
    made = cli("jobs", "create", *WHERE, "-n", name, *args)
    assert made.exit_code == 0 and f"Job {name} created" in made.stdout, made.stderr


def test_a_job_from_flags_reads_back_equal_to_the_same_job_from_json(cli, tmp_path: Path) -> None:
    _created(
        cli,
        "from-flags",
        *("--uri", "http://127.0.0.1:9/ping", "--method", "put", "--body", "hello"),
        *("--header", "Content-Type=text/plain", "--header", "X-Team=ops=1"),
        *("--on", "mon,Fri", "--at", "09:00", "--at", "17:00", "--time-zone", "Europe/London"),
        *("--start", "2026-07-06T08:00", "--end", "2027-06-30T18:00:00+01:00", "--retry", "fixed:PT1M:2"),
    )
    equivalent = {
        "properties": {
            "action": {
                "type": "Http",
                "request": {
                    "uri": "http://127.0.0.1:9/ping",
                    "method": "PUT",
                    "body": "hello",
                    "headers": {"Content-Type": "text/plain", "X-Team": "ops=1"},
                },
                "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2},
            },
            "startTime": "2026-07-06T07:00:00Z",  # 08:00 in London in summer
            "recurrence": {
                "frequency": "Week",
                "interval": 1,
                "endTime": "2027-06-30T17:00:00Z",
                "schedule": {"weekDays": ["Monday", "Friday"], "hours": [9, 17], "minutes": [0]},
                "timeZone": "Europe/London",
            },
        }
    }
    (tmp_path / "job.json").write_text(json.dumps(equivalent))
    _created(cli, "from-json", "-f", str(tmp_path / "job.json"))
    assert _properties(cli, "from-flags") == _properties(cli, "from-json")

    # The shortest form: GET by default (as the console), an Https action for an https:// URL, every 15 minutes.
    _created(cli, "short", "--uri", "https://127.0.0.1:9/health", "--every", "15m")
    (tmp_path / "short.json").write_text(
        json.dumps(
            {
                "properties": {
                    "action": {"type": "Https", "request": {"uri": "https://127.0.0.1:9/health", "method": "GET"}},
                    "recurrence": {"frequency": "Minute", "interval": 15},
                }
            }
        )
    )
    _created(cli, "short-json", "-f", str(tmp_path / "short.json"))
    assert _properties(cli, "short") == _properties(cli, "short-json")
    _created(cli, "posts", "--uri", "http://127.0.0.1:9/in", "--body", "x", "--at", "06:30")
    posted = _properties(cli, "posts")
    assert posted["action"]["request"]["method"] == "POST"  # a body without --method: POST
    assert posted["recurrence"]["frequency"] == "day" and posted["recurrence"]["schedule"] == {
        "hours": [6],
        "minutes": [30],
    }


def test_over_a_file_the_flags_win_and_update_changes_only_their_members(cli, tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    base.write_text(
        json.dumps(
            {
                "properties": {
                    "action": {
                        "type": "Http",
                        "request": {"uri": "http://127.0.0.1:9/a", "method": "POST", "headers": {"x-team": "a"}},
                    },
                    "recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday"], "hours": [9]}},
                }
            }
        )
    )
    _created(cli, "layered", "-f", str(base), "--uri", "http://127.0.0.1:9/b", "--header", "X-Team=b", "--every", "1d")
    p = _properties(cli, "layered")
    assert p["action"]["request"] == {"uri": "http://127.0.0.1:9/b", "method": "POST", "headers": {"X-Team": "b"}}
    assert p["recurrence"]["frequency"] == "day" and p["recurrence"]["schedule"] == {"hours": [9]}  # weekly only

    changed = cli("jobs", "update", *WHERE, "-n", "layered", "--at", "10:30", "--time-zone", "Asia/Tokyo")
    assert changed.exit_code == 0, changed.stderr
    p = _properties(cli, "layered")
    assert p["recurrence"]["schedule"] == {"hours": [10], "minutes": [30]} and p["recurrence"]["frequency"] == "day"
    assert p["recurrence"]["timeZone"] == "Asia/Tokyo" and p["action"]["request"]["uri"] == "http://127.0.0.1:9/b"
    weekly = cli("jobs", "update", *WHERE, "-n", "layered", "--on", "Tue-Thu")  # the stored frequency is Day
    assert weekly.exit_code == 2 and "add --every 1w" in weekly.stderr, weekly.stderr
    assert cli("jobs", "update", *WHERE, "-n", "layered", "--every", "2w", "--on", "Tue-Thu").exit_code == 0
    assert cli("jobs", "update", *WHERE, "-n", "layered", "--every", "6h", "--time-zone", "", "--at", "").exit_code == 0
    p = _properties(cli, "layered")
    assert (p["recurrence"]["frequency"], p["recurrence"]["interval"]) == ("hour", 6)
    assert "timeZone" not in p["recurrence"] and not p["recurrence"].get("schedule")  # week days dropped with 6h
    assert cli("jobs", "update", *WHERE, "-n", "layered", "--retry", "fixed:PT1M:3").exit_code == 0
    assert _properties(cli, "layered")["action"]["retryPolicy"] == {
        "retryType": "fixed",  # as the API answers its enums
        "retryInterval": "PT1M",
        "retryCount": 3,
    }
    assert cli("jobs", "update", *WHERE, "-n", "layered", "--retry", "none", "--header", "x-team=c").exit_code == 0
    p = _properties(cli, "layered")  # the whole policy replaced; the header of that name, in any case, replaced
    assert p["action"]["retryPolicy"] == {"retryType": "none"} and p["action"]["request"]["headers"] == {"x-team": "c"}


# Next year's days around each zone's change to summer time; the expected instants come from the standard
# library's zone data, not from the scheduler's engine.
YEAR = datetime.now(UTC).year + 1
LONDON, KOLKATA, NEW_YORK = ZoneInfo("Europe/London"), ZoneInfo("Asia/Kolkata"), ZoneInfo("America/New_York")
EU_SUMMER = max(d for d in range(25, 32) if date(YEAR, 3, d).weekday() == 6)  # the last Sunday of March
US_SUMMER = [d for d in range(1, 15) if date(YEAR, 3, d).weekday() == 6][1]  # the second Sunday of March
EVERY_OTHER_DAY = [date(YEAR, 1, 5) + timedelta(days=2 * k) for k in range(60)]
NY_DAYS = [d for d in EVERY_OTHER_DAY if d >= date(YEAR, 3, US_SUMMER - 3)][:4]


def _utc(day: date, hour: int, minute: int, zone: ZoneInfo) -> str:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone).astimezone(UTC).strftime(STAMP)


STAMP = "%Y-%m-%dT%H:%M:%SZ"
# (name, flags, the start date (midnight in the zone), the preview from, expected occurrences in UTC)
SCHEDULES = [
    (  # every 15 minutes, at 09:00 and 09:30 London time: two of them a day, an hour earlier in UTC from Sunday
        "every-15m-london",
        ["--every", "15m", "--at", "09:00,09:30", "--time-zone", "Europe/London"],
        date(YEAR, 3, EU_SUMMER - 2),
        _utc(date(YEAR, 3, EU_SUMMER - 2), 0, 0, LONDON),
        [_utc(date(YEAR, 3, EU_SUMMER + d), 9, m, LONDON) for d in (-2, -1, 0) for m in (0, 30)],
    ),
    (  # every 2 hours from midnight in Kolkata (UTC+05:30), at a quarter past
        "every-2h-kolkata",
        ["--every", "2h", "--at", ":15", "--time-zone", "Asia/Kolkata"],
        date(YEAR, 3, 6),
        _utc(date(YEAR, 3, 6), 0, 0, KOLKATA),
        [_utc(date(YEAR, 3, 6), h, 15, KOLKATA) for h in (0, 2, 4, 6)],
    ),
    (  # every 2 days from 5 January at 09:00 New York time, across its change to summer time
        "every-2d-new-york",
        ["--every", "2d", "--at", "09:00", "--time-zone", "America/New_York"],
        date(YEAR, 1, 5),
        _utc(NY_DAYS[0], 0, 0, NEW_YORK),
        [_utc(day, 9, 0, NEW_YORK) for day in NY_DAYS],
    ),
]


@pytest.mark.parametrize(("name", "flags", "start", "since", "expected"), SCHEDULES, ids=[s[0] for s in SCHEDULES])
def test_every_n_minutes_hours_days_at_times_in_a_zone_fire_as_the_engine_says(
    cli, name: str, flags: list[str], start: date, since: str, expected: list[str]
) -> None:
    flags = [*flags, "--start", f"{start}T00:00"]  # midnight in the job's zone
    _created(cli, name, "--uri", "http://127.0.0.1:9/tick", *flags)
    count = str(len(expected))
    preview = cli("-o", "json", "jobs", "occurrences", *WHERE, "-n", name, "--count", count, "--from", since)
    assert preview.exit_code == 0, preview.stderr
    assert [o["occurrenceTime"] for o in json.loads(preview.stdout)["value"]] == expected
    offline = cli("-o", "json", "next", *flags, "--count", count, "--after", since)
    assert offline.exit_code == 0, offline.stderr
    assert json.loads(offline.stdout)["occurrences"] == expected


REFUSED = [
    (["--every", "5m"], "error: IncompleteJob: a job needs a target: pass --uri URL"),
    (["--uri", "http://127.0.0.1:9/", "--every", "5 minutes"], "error: InvalidOption: --every '5 minutes': write N"),
    (["--uri", "http://127.0.0.1:9/", "--every", "1d", "--on", "Mon"], "week days need --every in weeks"),
    (["--uri", "http://127.0.0.1:9/", "--at", "09:00,17:30"], "so this would also run at 09:30, 17:00"),
    (["--uri", "http://127.0.0.1:9/", "--on", "Mon,Funday"], "'Funday' is not a week day"),
    (["--uri", "http://127.0.0.1:9/", "--time-zone", "Europe/London"], "error: IncompleteJob: --time-zone: a schedule"),
    (["--uri", "http://127.0.0.1:9/", "--end", "2027-01-01"], "error: IncompleteJob: --end: a schedule needs"),
    (["--uri", "http://127.0.0.1:9/", "--retry", "fixed:30s:4"], "INTERVAL '30s' is not a duration"),
    (["--uri", "http://127.0.0.1:9/", "--retry", "fixed:PT30S:four"], "COUNT 'four' is not a whole number"),
    (["--uri", "http://127.0.0.1:9/", "--header", "X-Team"], "--header 'X-Team': write NAME=VALUE"),
    (["--uri", "http://127.0.0.1:9/", "--start", "next monday"], "--start 'next monday': write an ISO 8601 time"),
    (
        ["--uri", "http://127.0.0.1:9/", "--every", "1d", "--start", "2026-12-01T09:00", "--time-zone", "CET Time"],
        "--time-zone 'CET Time': unknown time zone",
    ),
    (["--method", "POST", "--body", "x"], "error: IncompleteJob: a job needs a target"),
]


def test_contradictory_or_incomplete_flags_are_refused_with_nothing_stored(cli, tmp_path: Path) -> None:
    for args, words in REFUSED:
        refused = cli("jobs", "create", *WHERE, "-n", "refused", *args)
        assert refused.exit_code == 2 and refused.stderr.count("\n") == 1, (args, refused.stderr)
        assert refused.stderr.startswith("error: ") and words in refused.stderr, (args, refused.stderr)
    queue = tmp_path / "queue.json"
    queue.write_text(
        json.dumps(
            {
                "properties": {
                    "action": {
                        "type": "StorageQueue",
                        "queueMessage": {"storageAccount": "devstoreaccount1", "queueName": "q", "message": "m"},
                    }
                }
            }
        )
    )
    not_http = cli("jobs", "create", *WHERE, "-n", "refused", "-f", str(queue), "--method", "POST")
    assert not_http.exit_code == 2
    assert "--method set an Http action's request and the job's action is StorageQueue: give --uri" in not_http.stderr
    # A value only the API can judge: its 400 names the member, and nothing is stored either.
    too_often = cli("jobs", "create", *WHERE, "-n", "refused", "--uri", "http://127.0.0.1:9/", "--every", "1001m")
    assert too_often.exit_code == 1 and "properties.recurrence.interval" in too_often.stderr, too_often.stderr
    assert cli("jobs", "show", *WHERE, "-n", "refused").exit_code == 1  # JobNotFound

    _created(cli, "kept", "--uri", "http://127.0.0.1:9/kept", "--every", "1h")
    before = _properties(cli, "kept")
    for args in (["--on", "Mon"], ["--at", "25:00"], ["--retry", "sometimes"], ["--body", "x", "--header", "=1"]):
        refused = cli("jobs", "update", *WHERE, "-n", "kept", *args)
        assert refused.exit_code == 2 and refused.stderr.count("\n") == 1, (args, refused.stderr)
    assert _properties(cli, "kept") == before
