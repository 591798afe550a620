"""Run now (`Microsoft.Scheduler/jobCollections/jobs/run/action`) is refused without a token and without a role
that grants it, and a refused run fires nothing: the target hears only the run that an Owner asked for."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from tests.auth.conftest import OWNER, READER_ROLE, SUB, Scheduler, collection_scope
from tests.support.identity import new_id

GROUP, COLLECTION, JOB = "rg-run", "jc", "ping"
PATH = f"/subscriptions/{SUB}/resourceGroups/{GROUP}/providers/Microsoft.Scheduler/jobCollections/{COLLECTION}"


def test_a_refused_run_fires_nothing_and_an_owners_run_fires_once(scheduler: Scheduler, http_target) -> None:
    created = scheduler.as_(OWNER, "PUT", PATH, {"location": "westus", "properties": {"sku": {"name": "Standard"}}})
    assert created.status_code in (200, 201), created.text
    job = scheduler.as_(
        OWNER,
        "PUT",
        f"{PATH}/jobs/{JOB}",
        {
            "properties": {
                "startTime": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
                "action": {"type": "Http", "request": {"uri": f"{http_target.url}/run", "method": "POST"}},
            }
        },
    )
    assert job.status_code == 201, job.text
    reader = new_id()
    scheduler.assign(reader, READER_ROLE, collection_scope(GROUP, COLLECTION))

    anonymous = scheduler.http("POST", f"{PATH}/jobs/{JOB}/run")
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "AuthenticationFailed"
    for principal in (reader, new_id()):  # a Reader, and a principal with no role at all
        refused = scheduler.as_(principal, "POST", f"{PATH}/jobs/{JOB}/run")
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "AuthorizationFailed"
        assert "'Microsoft.Scheduler/jobCollections/jobs/run/action'" in refused.json()["error"]["message"]

    allowed = scheduler.as_(OWNER, "POST", f"{PATH}/jobs/{JOB}/run")
    assert allowed.status_code == 200, allowed.text
    http_target.wait_for(1, 20)
    time.sleep(1.5)  # a run let through by a refused call would arrive by now too
    assert len(http_target.requests) == 1
    deadline = time.monotonic() + 15  # history is written once the action went out
    while True:
        history = scheduler.as_(reader, "GET", f"{PATH}/jobs/{JOB}/history").json()["value"]
        if history or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert [entry["properties"]["status"] for entry in history] == ["Completed"]
