"""`scheduler collections forecast` (scheduler_cli/forecast.py) against the real function_app.py under the local
host: the table names the busiest minute, the destination with its busiest second and the seconds over its rate
limit; `-o json` prints the API's answer whole; `--hours` out of range is refused before any request.

The jobs start hours ahead, so nothing fires while the test runs and the counts do not depend on when it runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

RG, JC = "forecast-rg", "forecast-jc"
WHERE = ["-g", RG, "-c", JC]
# Two hourly jobs at the same second to one host limited to 1 request a second: each of their seconds is over it.
START = (datetime.now(UTC) + timedelta(hours=2)).replace(minute=0, second=0, microsecond=0)


@pytest.fixture(scope="module", autouse=True)
def collection(cli) -> None:
    made = cli("collections", "create", *WHERE, "--location", "westeurope", "--rate-limit", "127.0.0.1=1")
    assert made.exit_code == 0, made.stderr
    for name in ("first", "second"):
        job = cli(
            "jobs", "create", *WHERE, "-n", name, "--uri", "http://127.0.0.1:9/ping", "--every", "1h",
            "--start", START.strftime("%Y-%m-%dT%H:%M:%SZ"),
        )  # fmt: skip
        assert job.exit_code == 0, job.stderr


def test_the_table_names_the_busiest_minute_and_the_seconds_over_the_limit(cli) -> None:
    shown = cli("--times-in", "UTC", "collections", "forecast", *WHERE, "--hours", "4")
    assert shown.exit_code == 0, shown.stderr
    first = f"{START:%Y-%m-%d %H:%M:%S} UTC"
    # Two jobs at START and the two hours after it (the window ends 4 h from now, START is at most 2 h ahead).
    runs = sum(1 for h in range(4) if START + timedelta(hours=h) < datetime.now(UTC) + timedelta(hours=4))
    assert f"Forecast of {JC}: {2 * runs} occurrence(s)" in shown.stdout
    assert "Busiest minutes" in shown.stdout and "Destinations" in shown.stdout
    assert "127.0.0.1" in shown.stdout and "1/s" in shown.stdout
    assert f"{first} (2)" in shown.stdout  # the busiest second, and the first second over the limit


def test_json_is_the_apis_answer(cli) -> None:
    shown = cli("-o", "json", "collections", "forecast", *WHERE, "--hours", "3")
    assert shown.exit_code == 0, shown.stderr
    answer = json.loads(shown.stdout)
    assert set(answer) == {"from", "to", "minutes", "destinations", "notes"}
    [host] = answer["destinations"]
    assert (host["destination"], host["kind"], host["limit"]) == ("127.0.0.1", "Http", 1)
    start = START.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert host["busiestSecond"] == {"second": start, "count": 2}
    assert host["overLimit"][0] == {"second": start, "count": 2, "collection": host["overLimit"][0]["collection"]}
    assert host["overLimit"][0]["collection"].endswith(f"/jobCollections/{JC}")


def test_hours_out_of_range_are_refused(cli) -> None:
    refused = cli("collections", "forecast", *WHERE, "--hours", "169")
    assert refused.exit_code != 0 and "169" in refused.stderr
