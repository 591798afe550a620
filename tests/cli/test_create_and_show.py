"""`scheduler` against the real function_app.py under the local host: `create` refuses a name already taken (a
collection's or a job's: replacing it would wipe what the command does not set) and `--replace` replaces;
`collections show` and `list` give the limits the API enforces (the plan's, tightened by the quota, and the
history kept), in the console's words; `jobs create`/`update` set, and `jobs show` shows, a job's success
expectation and missed-run policy."""

from __future__ import annotations

import json
import re
from pathlib import Path

RG = "create-rg"


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _job(tmp_path: Path, name: str, frequency: str = "Hour", **more: object) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "properties": {
                    "action": {"type": "Http", "request": {"uri": f"http://127.0.0.1:9/{name}", "method": "GET"}},
                    "recurrence": {"frequency": frequency, "interval": 1},
                    **more,
                }
            }
        )
    )
    return path


def _stored(cli, *flags: str) -> dict:
    return json.loads(cli("-o", "json", "jobs", "show", *flags).stdout)["properties"]


def test_create_refuses_a_taken_name_and_keeps_its_settings_until_replace(cli, tmp_path: Path) -> None:
    where = ["-g", RG, "-c", "kept"]
    made = cli("collections", "create", *where, "--location", "westeurope")
    assert made.exit_code == 0 and "Job collection kept created" in made.stdout, made.stderr
    assert cli("collections", "update", *where, "--max-concurrent", "10", "--rate-limit", "127.0.0.1=50").exit_code == 0
    again = cli("collections", "create", *where, "--location", "westeurope")  # the README's line, run twice
    assert again.exit_code == 1 and again.stderr.count("\n") == 1, again.stderr
    assert again.stderr.startswith(f"error: Conflict: job collection 'kept' already exists in resource group '{RG}': ")
    assert "`create --replace` replaces it" in again.stderr
    shown = json.loads(cli("-o", "json", "collections", "show", *where).stdout)["properties"]
    assert shown["maxConcurrentExecutions"] == 10 and shown["targetRateLimits"][0]["host"] == "127.0.0.1"
    replaced = cli("collections", "create", *where, "--location", "westeurope", "--replace")
    assert replaced.exit_code == 0 and "Job collection kept replaced" in replaced.stdout
    assert (
        "maxConcurrentExecutions"
        not in json.loads(cli("-o", "json", "collections", "show", *where).stdout)["properties"]
    )

    job = [*where, "-n", "ping"]
    created = cli("jobs", "create", *job, "-f", str(_job(tmp_path, "ping")))
    assert created.exit_code == 0 and "Job ping created" in created.stdout, created.stderr
    assert cli("jobs", "update", *job, "--overlap-policy", "Skip").exit_code == 0
    twice = cli("jobs", "create", *job, "-f", str(_job(tmp_path, "ping")))
    assert twice.exit_code == 1 and twice.stderr.count("\n") == 1
    assert twice.stderr.startswith("error: Conflict: job 'ping' already exists in job collection 'kept': ")
    assert _stored(cli, *job)["overlapPolicy"] == "Skip"
    again = cli("jobs", "create", *job, "-f", str(_job(tmp_path, "ping")), "--replace")
    assert again.exit_code == 0 and "Job ping replaced" in again.stdout
    assert "overlapPolicy" not in _stored(cli, *job)


def test_show_and_list_give_the_limits_the_api_enforces(cli, tmp_path: Path) -> None:
    free = ["-g", RG, "-c", "free"]
    assert cli("collections", "create", *free, "-l", "westus", "--sku", "Free").exit_code == 0
    shown = _flat(cli("collections", "show", *free).stdout)
    assert "jobs used / max 0 of at most 5 (the Free plan)" in shown
    assert "each job runs at most once every 1 hour" in shown
    assert "outbound authentication not allowed on the Free plan" in shown
    assert "history kept the newest 1000 entries per job, none older than 60 days" in shown
    limits = json.loads(cli("-o", "json", "collections", "show", *free).stdout)["limits"]
    assert (limits["maxJobs"], limits["minIntervalSeconds"], limits["retention"]["maxAge"]) == (5, 3600, "P60D")
    # What the API then does agrees with what was shown.
    for n in range(5):
        assert cli("jobs", "create", *free, "-n", f"h{n}", "-f", str(_job(tmp_path, f"h{n}"))).exit_code == 0
    sixth = cli("jobs", "create", *free, "-n", "h5", "-f", str(_job(tmp_path, "h5")))
    assert sixth.exit_code == 1 and "maxJobCount 5 on the Free plan" in sixth.stderr
    assert cli("jobs", "delete", *free, "-n", "h4", "-y").exit_code == 0
    often = cli("jobs", "create", *free, "-n", "often", "-f", str(_job(tmp_path, "often", "Minute")))
    assert often.exit_code == 1 and "at most once every 1 hour" in often.stderr

    tight = ["-g", RG, "-c", "tight"]
    assert cli("collections", "create", *tight, "-l", "westus", "--max-jobs", "2").exit_code == 0
    assert "of at most 2 (maxJobCount; the Standard plan allows 50)" in _flat(cli("collections", "show", *tight).stdout)
    listed = cli("collections", "list", "-g", RG).stdout
    row = next(line for line in listed.splitlines() if " free " in line)
    assert re.search(r"Free\s*│\s*5\s*│\s*1 hour", row), row


def test_jobs_set_show_and_remove_the_expectation_and_missed_run_policy(cli, tmp_path: Path) -> None:
    where = ["-g", RG, "-c", "watch"]
    assert cli("collections", "create", *where, "-l", "westus").exit_code == 0
    job = [*where, "-n", "beat"]
    flags = ["--expect-success-within", "PT2M", "--missed-run-policy", "All"]
    made = cli("jobs", "create", *job, "-f", str(_job(tmp_path, "beat")), *flags)
    assert made.exit_code == 0, made.stderr
    stored = _stored(cli, *job)
    assert stored["expectSuccessWithin"] == "PT2M" and stored["missedRunPolicy"]["type"].lower() == "all"
    shown = _flat(cli("jobs", "show", *job).stdout)
    assert "expect success within PT2M" in shown
    assert "missed-run policy All: the latest 10 missed occurrences of the last P1D run" in shown

    windowed = _job(tmp_path, "beat", missedRunPolicy={"type": "All", "window": "P2D", "maxRuns": 3})
    assert cli("jobs", "update", *job, "-f", str(windowed), "--missed-run-policy", "All").exit_code == 0
    assert "the latest 3 missed occurrences of the last P2D run" in _flat(cli("jobs", "show", *job).stdout)
    # A PATCH to Skip drops All's window and maxRuns (the API would refuse them with Skip).
    skipped = cli("jobs", "update", *job, "--missed-run-policy", "Skip", "--expect-success-within", "")
    assert skipped.exit_code == 0, skipped.stderr
    stored = _stored(cli, *job)
    assert "expectSuccessWithin" not in stored and list(stored["missedRunPolicy"]) == ["type"]
    assert "missed-run policy Skip: " in _flat(cli("jobs", "show", *job).stdout)
    assert "expect success within - (no expectation)" in _flat(cli("jobs", "show", *job).stdout)

    wrong = cli("jobs", "update", *job, "--missed-run-policy", "Sometimes")
    assert wrong.exit_code == 1 and "missedRunPolicy" in wrong.stderr
    short = cli("jobs", "update", *job, "--expect-success-within", "PT10S")
    assert short.exit_code == 1 and "expectSuccessWithin" in short.stderr
