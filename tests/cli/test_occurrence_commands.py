"""`scheduler jobs occurrences|what-if|backfill|ledger` (newer api-version) against the real function_app.py
under the local host: the preview with notes, a what-if that writes nothing, a backfill, and the ledger."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

RG, JC = "occ-rg", "occ-jc"


def test_preview_what_if_backfill_and_ledger(cli, host_url: str, tmp_path: Path) -> None:
    assert cli("collections", "create", "-g", RG, "-c", JC, "--location", "westus").exit_code == 0
    start = (datetime.now(UTC) - timedelta(hours=3)).replace(minute=0, second=0, microsecond=0)
    job = tmp_path / "job.json"
    job.write_text(
        json.dumps(
            {
                "properties": {
                    "startTime": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "recurrence": {"frequency": "Hour", "count": 6},
                    "missedRunPolicy": {"type": "Skip"},
                    "action": {"type": "Http", "request": {"uri": f"{host_url}/openapi.json", "method": "GET"}},
                }
            }
        )
    )
    flags = ["-g", RG, "-c", JC, "-n", "hourly"]
    assert cli("jobs", "create", *flags, "-f", str(job)).exit_code == 0

    table = cli("jobs", "occurrences", *flags)
    assert table.exit_code == 0, table.stderr
    assert "the recurrence's count is reached" in table.stdout
    preview = json.loads(cli("-o", "json", "jobs", "occurrences", *flags, "--count", "2").stdout)
    assert len(preview["value"]) == 2

    changed = tmp_path / "change.json"
    changed.write_text('{"properties": {"recurrence": {"count": 8}}}')
    asked = cli("jobs", "what-if", *flags, "-f", str(changed), "--patch")
    assert asked.exit_code == 0, asked.stderr
    assert "Modify job hourly" in asked.stdout and "nothing was written" in asked.stdout
    shown = json.loads(cli("-o", "json", "jobs", "show", *flags).stdout)
    assert shown["properties"]["recurrence"]["count"] == 6  # unchanged

    since = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    until = (start + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    queued = json.loads(cli("-o", "json", "jobs", "backfill", *flags, "--from", since, "--to", until).stdout)
    assert [o["occurrenceTime"] for o in queued["value"]] == [
        since,
        (start + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    ]
    ledger = cli("jobs", "ledger", *flags)
    assert ledger.exit_code == 0 and "Ledger of hourly" in ledger.stdout
    refused = cli("jobs", "backfill", *flags, "--from", until, "--to", since)
    assert refused.exit_code == 1 and refused.stderr.startswith("error: BadRequest (HTTP 400)")


def test_what_if_takes_the_flags_of_create_and_update_and_writes_nothing(cli, host_url: str) -> None:
    assert cli("collections", "create", "-g", RG, "-c", JC, "--location", "westus").exit_code in (0, 1)
    flags = ["-g", RG, "-c", JC, "-n", "dry"]
    schedule = ["--every", "1d", "--at", "09:00", "--time-zone", "Europe/Berlin", "--overlap-policy", "Skip"]
    asked = cli("-o", "json", "jobs", "what-if", *flags, "--uri", f"{host_url}/openapi.json", *schedule)
    assert asked.exit_code == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["changeType"] == "Create"
    properties = answer["job"]["properties"]
    assert properties["recurrence"]["timeZone"] == "Europe/Berlin" and properties["overlapPolicy"] == "Skip"
    assert properties["action"]["request"] == {"uri": f"{host_url}/openapi.json", "method": "GET"}
    assert len(answer["occurrences"]["value"]) == 10
    assert cli("jobs", "show", *flags).exit_code == 1  # nothing was written

    incomplete = cli("jobs", "what-if", *flags, "--every", "1d")
    assert incomplete.exit_code == 2 and incomplete.stderr.startswith("error: IncompleteJob: a job needs a target")

    assert cli("jobs", "create", *flags, "--uri", f"{host_url}/openapi.json", *schedule).exit_code == 0
    patched = cli("jobs", "what-if", *flags, "--patch", "--every", "2h", "--at", ":30", "--count", "3")
    assert patched.exit_code == 0, patched.stderr
    assert "What-if: Modify job dry" in patched.stdout and "Europe/Berlin (" in patched.stdout  # its zone is kept
    stored = json.loads(cli("-o", "json", "jobs", "show", *flags).stdout)["properties"]["recurrence"]
    assert stored["frequency"].lower() == "day"  # unchanged
