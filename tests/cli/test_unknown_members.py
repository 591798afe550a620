"""The CLI warns about every member the API does not know (checked against the API's GET /openapi.json) and
the api-version it speaks (the newest) refuses them, naming the path: a misspelt `recurence` would otherwise
make a one-shot job, as 2016-03-01 (lenient, as the real service was) still does."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

RG, JC = "members-rg", "members-jc"


def test_jobs_create_and_update_warn_about_ignored_members(cli, tmp_path: Path) -> None:
    assert cli("collections", "create", "-g", RG, "-c", JC, "-l", "westus").exit_code == 0
    job = tmp_path / "job.json"
    job.write_text(
        json.dumps(
            {
                "properties": {
                    "startTime": (datetime.now(UTC) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "recurence": {"frequency": "Hour"},
                    "action": {
                        "type": "Http",
                        "request": {
                            "uri": "http://127.0.0.1:9/",
                            "method": "GET",
                            "retryPolicy": {"retryType": "None"},
                        },
                    },
                }
            }
        )
    )
    created = cli("jobs", "create", "-g", RG, "-c", JC, "-n", "typo", "-f", str(job))
    assert created.exit_code == 1
    assert created.stderr.splitlines()[:2] == [
        "warning: properties.recurence: not a member of JobProperties: 2016-03-01 ignores it, "
        "the newer api-version refuses it "
        "(did you mean 'recurrence'?)",
        "warning: properties.action.request.retryPolicy: not a member of HttpRequest: 2016-03-01 ignores it, "
        "the newer api-version refuses it "
        "(did you mean 'properties.action.retryPolicy'?)",
    ]
    assert "properties.recurence: the member is not part of JobProperties" in created.stderr  # refused: 400
    assert cli("jobs", "show", "-g", RG, "-c", JC, "-n", "typo").exit_code == 1  # nothing stored
    fixed = json.loads(job.read_text())
    fixed["properties"]["recurrence"] = fixed["properties"].pop("recurence")
    fixed["properties"]["action"]["retryPolicy"] = fixed["properties"]["action"]["request"].pop("retryPolicy")
    job.write_text(json.dumps(fixed))
    assert cli("jobs", "create", "-g", RG, "-c", JC, "-n", "typo", "-f", str(job)).exit_code == 0
    patch = tmp_path / "patch.json"
    patch.write_text('{"state": "Disabled", "stat": "Enabled"}')
    updated = cli("jobs", "update", "-g", RG, "-c", JC, "-n", "typo", "-f", str(patch))
    assert updated.exit_code == 1 and "warning: properties.stat: not a member of JobProperties" in updated.stderr
    clean = tmp_path / "clean.json"
    clean.write_text('{"properties": {"state": "Enabled"}}')
    assert cli("jobs", "update", "-g", RG, "-c", JC, "-n", "typo", "-f", str(clean)).stderr == ""


def test_collections_create_from_a_file_warns_too(cli, tmp_path: Path) -> None:
    body = tmp_path / "collection.json"
    body.write_text('{"location": "westus", "properties": {"quota": {"maxJobCount": 3, "maxJobs": 3}}}')
    made = cli("collections", "create", "-g", RG, "-c", "members-file", "-f", str(body))
    assert made.exit_code == 1
    assert made.stderr.startswith(
        "warning: properties.quota.maxJobs: not a member of JobCollectionQuota: 2016-03-01 ignores it, "
        "the newer api-version refuses it (did you mean 'maxJobCount'?)\n"
    )
    assert "properties.quota.maxJobs: the member is not part of JobCollectionQuota" in made.stderr
