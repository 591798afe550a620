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
