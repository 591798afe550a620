"""`scheduler` shows and sets issue 27's members (and issue 40's autoSpread) against the real function_app.py under
the local host: a job's overlap policy and spread window (create, update, list, show, run's override), a
collection's maxConcurrentExecutions, targetRateLimits and autoSpread (create, update, show), and the ledger's
Waited column."""

from __future__ import annotations

import json
from pathlib import Path

RG, JC = "limits-rg", "limits-jc"


def test_a_jobs_overlap_policy_and_spread_window(cli, host_url: str, tmp_path: Path) -> None:
    assert cli("collections", "create", "-g", RG, "-c", JC, "--location", "westus").exit_code == 0
    job = tmp_path / "job.json"
    job.write_text(
        json.dumps(
            {
                "recurrence": {"frequency": "Minute", "interval": 5},
                "action": {"type": "Http", "request": {"uri": f"{host_url}/openapi.json", "method": "GET"}},
            }
        )
    )
    flags = ["-g", RG, "-c", JC, "-n", "slow"]
    made = cli("jobs", "create", *flags, "-f", str(job), "--overlap-policy", "Skip", "--spread-window", "PT30S")
    assert made.exit_code == 0, made.stderr
    shown = cli("jobs", "show", *flags)
    assert "overlap policy" in shown.stdout and "Skip" in shown.stdout and "PT30S" in shown.stdout
    assert "Skip, spread PT30S" in cli("jobs", "list", "-g", RG, "-c", JC).stdout

    assert cli("jobs", "update", *flags, "--overlap-policy", "BufferOne", "--spread-window", "").exit_code == 0
    stored = json.loads(cli("-o", "json", "jobs", "show", *flags).stdout)["properties"]
    assert stored["overlapPolicy"] == "BufferOne" and "spreadWindow" not in stored
    assert stored["recurrence"]["interval"] == 5  # a PATCH: the rest is kept

    refused = cli("jobs", "update", *flags, "--spread-window", "PT10M")  # longer than the 5-minute interval
    assert refused.exit_code == 1 and "properties.spreadWindow" in refused.stderr
    nothing = cli("jobs", "update", *flags)
    assert nothing.exit_code == 2 and "NothingToChange" in nothing.stderr

    assert cli("jobs", "run", *flags, "--overlap-policy", "Allow").exit_code == 0
    bad = cli("jobs", "run", *flags, "--overlap-policy", "Never")
    assert bad.exit_code == 1 and "overlapPolicy" in bad.stderr
    ledger = cli("jobs", "ledger", *flags)
    assert ledger.exit_code == 0 and "Waited" in ledger.stdout


def test_a_collections_limits(cli) -> None:
    made = cli(
        "collections",
        "create",
        "-g",
        RG,
        "-c",
        "limited",
        "--location",
        "westus",
        "--max-concurrent",
        "10",
        "--rate-limit",
        "api.example.com=50",
        "--rate-limit",
        "*.example.org=0.5",
    )
    assert made.exit_code == 0, made.stderr
    shown = cli("collections", "show", "-g", RG, "-c", "limited")
    assert "max concurrent executions" in shown.stdout and "10" in shown.stdout
    assert "api.example.com 50/s, *.example.org 0.5/s" in shown.stdout
    stored = json.loads(cli("-o", "json", "collections", "show", "-g", RG, "-c", "limited").stdout)["properties"]
    assert stored["targetRateLimits"] == [
        {"host": "api.example.com", "requestsPerSecond": 50},
        {"host": "*.example.org", "requestsPerSecond": 0.5},
    ]

    changed = cli("collections", "update", "-g", RG, "-c", "limited", "--max-concurrent", "3")
    assert changed.exit_code == 0 and "max concurrent executions 3" in changed.stdout, changed.stderr
    cleared = cli("collections", "update", "-g", RG, "-c", "limited", "--max-concurrent", "0", "--no-rate-limits")
    assert cleared.exit_code == 0 and "no limit" in cleared.stdout and "rate limits -" in cleared.stdout
    stored = json.loads(cli("-o", "json", "collections", "show", "-g", RG, "-c", "limited").stdout)["properties"]
    assert "maxConcurrentExecutions" not in stored and "targetRateLimits" not in stored
    assert stored["sku"]["name"] == "Standard"  # a PATCH: the rest is kept

    malformed = cli("collections", "update", "-g", RG, "-c", "limited", "--rate-limit", "api.example.com")
    assert malformed.exit_code != 0 and "HOST=RPS" in malformed.stderr
    refused = cli("collections", "update", "-g", RG, "-c", "limited", "--rate-limit", "https://x.com=5")
    assert refused.exit_code == 1 and "host" in refused.stderr


def test_a_collections_auto_spread(cli) -> None:
    made = cli("collections", "create", "-g", RG, "-c", "spread", "--location", "westus", "--auto-spread", "PT20S")
    assert made.exit_code == 0, made.stderr
    flags = ["-g", RG, "-c", "spread"]
    assert "up to PT20S later" in cli("collections", "show", *flags).stdout

    changed = cli("collections", "update", *flags, "--auto-spread", "PT1M")
    assert changed.exit_code == 0 and "auto spread up to PT1M later" in changed.stdout, changed.stderr
    stored = json.loads(cli("-o", "json", "collections", "show", *flags).stdout)["properties"]
    assert stored["autoSpread"] == {"tolerance": "PT1M"}
    shown = cli("collections", "show", *flags).stdout
    assert "auto spread" in shown and "up to PT1M later" in shown

    too_long = cli("collections", "update", *flags, "--auto-spread", "PT10M")
    assert too_long.exit_code == 1, too_long.stdout
    assert "properties.autoSpread.tolerance" in too_long.stderr and "whole seconds from PT1S to PT5M" in too_long.stderr
    both = cli("collections", "update", *flags, "--auto-spread", "PT5S", "--no-auto-spread")
    assert both.exit_code == 2 and "exclude each other" in both.stderr
    assert json.loads(cli("-o", "json", "collections", "show", *flags).stdout)["properties"]["autoSpread"] == {
        "tolerance": "PT1M"
    }

    removed = cli("collections", "update", *flags, "--no-auto-spread")
    assert removed.exit_code == 0 and "auto spread off" in removed.stdout, removed.stderr
    stored = json.loads(cli("-o", "json", "collections", "show", *flags).stdout)["properties"]
    assert "autoSpread" not in stored and stored["sku"]["name"] == "Standard"
    assert "auto spread" in cli("collections", "show", *flags).stdout
