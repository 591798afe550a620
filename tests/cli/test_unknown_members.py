"""The CLI warns about every member the API ignores (checked against the API's GET /openapi.json), and
2016-03-01 still accepts the job as the real service did: a misspelt `recurence` makes a one-shot job."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

RG, JC = "members-rg", "members-jc"


def test_jobs_create_and_update_warn_about_ignored_members(cli, tmp_path: Path) -> None:
    assert cli("collections", "create", "-g", RG, "-c", JC, "-l", "westus").exit_code == 0
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"properties": {
        "startTime": (datetime.now(UTC) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "recurence": {"frequency": "Hour"},
        "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET",
                                               "retryPolicy": {"retryType": "None"}}}}}))
    created = cli("jobs", "create", "-g", RG, "-c", JC, "-n", "typo", "-f", str(job))
    assert created.exit_code == 0
    assert created.stderr.splitlines() == [
        "warning: properties.recurence: not a member of JobProperties, so the API ignores it "
        "(did you mean 'recurrence'?)",
        "warning: properties.action.request.retryPolicy: not a member of HttpRequest, so the API ignores it "
        "(did you mean 'properties.action.retryPolicy'?)"]
    shown = json.loads(cli("-o", "json", "jobs", "show", "-g", RG, "-c", JC, "-n", "typo").stdout)["properties"]
    assert "recurrence" not in shown  # lenient, as the real service: the job is a one-shot
    patch = tmp_path / "patch.json"
    patch.write_text('{"state": "Disabled", "stat": "Enabled"}')
    updated = cli("jobs", "update", "-g", RG, "-c", JC, "-n", "typo", "-f", str(patch))
    assert updated.exit_code == 0 and "warning: properties.stat: not a member of JobProperties" in updated.stderr
    clean = tmp_path / "clean.json"
    clean.write_text('{"properties": {"state": "Enabled"}}')
    assert cli("jobs", "update", "-g", RG, "-c", JC, "-n", "typo", "-f", str(clean)).stderr == ""


def test_collections_create_from_a_file_warns_too(cli, tmp_path: Path) -> None:
    body = tmp_path / "collection.json"
    body.write_text('{"location": "westus", "properties": {"quota": {"maxJobCount": 3, "maxJobs": 3}}}')
    made = cli("collections", "create", "-g", RG, "-c", "members-file", "-f", str(body))
    assert made.exit_code == 0
    assert made.stderr == ("warning: properties.quota.maxJobs: not a member of JobCollectionQuota, so the API "
                           "ignores it (did you mean 'maxJobCount'?)\n")
