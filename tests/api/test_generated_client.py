"""A client generated from the newer api-version's served OpenAPI document drives what the CLI uses (issue 38,
major 7): what-if (query parameter and header), the occurrences preview (count, from), backfill (its body and
overlapPolicy, as a dry run and for real) and the ledger with its $filter, over real HTTP
(tests/api/conftest.py's server, real Azurite, a real local target).

The client is generated at test time into tmp_path by openapi-python-client (requirements-dev.txt), offline, from
the document as GET /api/openapi-2026-12-01-preview.json serves it: nothing generated is kept. Each answer
parses into the document's models with no member left over (`additional_properties`), so the document declares
every member the API answers.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pytest
import requests

from shared.auth.roles import READER
from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from shared.settings import Settings
from tests.api.conftest import RG, SUB, ApiServer
from tests.support.clock import ManualClock
from tests.support.scheduler_client import drain

PACKAGE = "scheduler_generated_client"
JC, JOB = "generated", "every-minute"


@pytest.fixture
def runtime(settings: Settings, clock: ManualClock) -> Iterator[Runtime]:
    """The server's runtime on a held clock: the job's next scheduled occurrence stays half a minute away (its
    queued message invisible), so what is due at once is what the backfill queues."""
    runtime = Runtime.create(settings, clock)
    yield runtime
    runtime.close()


@pytest.fixture
def generated(api_server: ApiServer, tmp_path: Path) -> Iterator[ModuleType]:
    """The generated package, importable as PACKAGE while the test runs."""
    document = tmp_path / "openapi.json"
    document.write_text(requests.get(f"{api_server.url}/openapi-{PREVIEW_API_VERSION}.json", timeout=30).text)
    config = tmp_path / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter run: the generated code is imported, never kept
    command = [sys.executable, "-m", "openapi_python_client", "generate", "--path", str(document)]
    command += ["--output-path", str(tmp_path / PACKAGE), "--meta", "none", "--config", str(config)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and "Warning" not in done.stdout + done.stderr, done.stdout + done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def _part(name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{name}")


def _undeclared(value: Any, path: str = "") -> list[str]:
    """Members of an answer that its model does not declare (a map's entries are its own)."""
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in _undeclared(item, f"{path}[{i}]")]
    if not attrs.has(type(value)):
        return []
    declared = [f.name for f in attrs.fields(type(value)) if f.name != "additional_properties"]
    if not declared:
        return []
    found = [f"{path}.{key}" for key in getattr(value, "additional_properties", {})]
    return found + [m for name in declared for m in _undeclared(getattr(value, name), f"{path}.{name}")]


def _parsed(response: Any, model: type) -> Any:
    assert isinstance(response, model), response
    assert _undeclared(response) == []
    return response


def z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Driver:
    """The generated client's parts, pointed at the test server, with one collection and one job stored."""

    models: Any
    jobs: dict[str, Any]
    call: dict[str, Any]  # what every job operation takes: the job's path, the client, the api-version
    start: datetime  # the job's startTime: two hours before now, every minute since

    def sync(self, operation: str, **given: Any) -> Any:
        return self.jobs[operation].sync(**self.call, **given)

    def detailed(self, operation: str, **given: Any) -> Any:
        return self.jobs[operation].sync_detailed(**self.call, **given)


def _driver(package: ModuleType, api_server: ApiServer, http_target: Any, clock: ManualClock) -> Driver:
    models = _part("models")
    names = ("create_or_update", "patch", "get", "delete", "backfill", "list_occurrences", "list_job_history")
    client = package.Client(base_url=api_server.url, raise_on_unexpected_status=True)
    version = models.ApiVersion(PREVIEW_API_VERSION)
    plan = {"location": "westus", "properties": {"sku": {"name": "Standard"}}}
    collection = _part("api.job_collections.job_collections_create_or_update").sync(
        SUB, RG, JC, client=client, api_version=version, body=models.JobCollectionDefinition.from_dict(plan)
    )
    assert _parsed(collection, models.JobCollectionDefinition).name == JC
    path = {"subscription_id": SUB, "resource_group_name": RG, "job_collection_name": JC, "job_name": JOB}
    start = clock.now().replace(second=0, microsecond=0) - timedelta(hours=2)
    driver = Driver(models, {n: _part(f"api.jobs.jobs_{n}") for n in names}, path | {"client": client}, start)
    driver.call["api_version"] = version
    job = {"startTime": z(start), "recurrence": {"frequency": "Minute", "interval": 1}}
    job["action"] = {"type": "Http", "request": {"uri": http_target.url, "method": "POST"}}
    created = driver.detailed("create_or_update", body=models.JobDefinition.from_dict({"properties": job}))
    assert created.status_code == 201 and _parsed(created.parsed, models.JobDefinition).name == f"{JC}/{JOB}"
    return driver


RICH_JOB = {  # a job using much of the newer version's model, so that its what-if answer covers the schemas
    "properties": {
        "startTime": "2026-03-02T00:00:00Z",
        "recurrence": {
            "frequency": "Week",
            "interval": 1,
            "timeZone": "Europe/London",
            "schedule": {"weekDays": ["Monday", "Friday"], "hours": [9], "minutes": [30]},
        },
        "action": {
            "type": "Http",
            "request": {"uri": "http://127.0.0.1:9/hook", "method": "POST", "headers": {"x-team": "ops"}},
            "retryPolicy": {"retryType": "Exponential", "retryInterval": "PT30S", "retryCount": 3},
            "errorAction": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/error", "method": "POST"}},
        },
        "overlapPolicy": "Skip",
    }
}


def test_a_generated_client_dry_runs_writes_and_previews_occurrences(
    generated: ModuleType, api_server: ApiServer, http_target: Any, clock: ManualClock
) -> None:
    driver, models = _driver(generated, api_server, http_target, clock), _part("models")
    # What-if by the query parameter: the job as it would be, its next 3 occurrences, nothing written.
    rich = models.JobDefinition.from_dict(RICH_JOB)
    other = dict(driver.call, job_name="rich")
    dry = _parsed(driver.jobs["create_or_update"].sync(**other, body=rich, what_if=True, count=3), models.JobWhatIf)
    assert dry.change_type == models.JobWhatIfChangetype.CREATE and dry.job.name == f"{JC}/rich"
    recurrence, action = dry.job.properties.recurrence, dry.job.properties.action
    assert recurrence.schedule.week_days == [models.DayOfWeekAsAnswered.MONDAY, models.DayOfWeekAsAnswered.FRIDAY]
    assert action.retry_policy.retry_type == models.RetryTypeAsAnswered.EXPONENTIAL  # as answers spell it
    assert [o.occurrence_time.weekday() for o in dry.occurrences.value] == [0, 4, 0]
    missing = driver.jobs["get"].sync(**other)
    assert _parsed(missing, models.ErrorResponse).error.code == "NotFound"

    # The occurrences preview, from an instant.
    since = driver.start + timedelta(days=1)
    preview = _parsed(driver.sync("list_occurrences", count=5, from_=since), models.OccurrencePreview)
    assert [o.occurrence_time for o in preview.value] == [since + timedelta(minutes=n) for n in range(5)]

    # What-if by the header, on a PATCH: Modify, and the job unchanged.
    patch = models.JobDefinition.from_dict({"properties": {"state": "Disabled"}})
    dry = _parsed(driver.sync("patch", body=patch, x_ms_what_if=True), models.JobWhatIf)
    assert dry.change_type == models.JobWhatIfChangetype.MODIFY and dry.occurrences.notes
    assert dry.job.properties.state == models.JobStateAsAnswered.DISABLED  # as the recorded service spelt it
    assert _parsed(driver.sync("get"), models.JobDefinition).properties.state == models.JobStateAsAnswered.ENABLED

    # What-if of a DELETE: a body only a dry run has (x-what-if-answer), so the 200 is read with its model.
    dry_delete = driver.detailed("delete", x_ms_what_if=True)
    answer = models.JobDeleteWhatIf.from_dict(json.loads(dry_delete.content))
    assert answer.change_type == "Delete" and answer.job.name == f"{JC}/{JOB}" and _undeclared(answer) == []
    assert driver.detailed("get").status_code == 200


def test_a_generated_client_backfills_and_reads_the_ledger(
    generated: ModuleType, api_server: ApiServer, http_target: Any, clock: ManualClock
) -> None:
    driver, models = _driver(generated, api_server, http_target, clock), _part("models")
    queue = api_server.runtime.store.queue.client
    start, end = driver.start, driver.start + timedelta(minutes=3)
    # A dry run queues nothing; then for real, with an overlap policy of its own.
    backfill = {"body": models.BackfillRequest(from_=start, to=end), "overlap_policy": models.OverlapPolicy.ALLOW}
    planned = _parsed(driver.sync("backfill", **backfill, what_if=True), models.BackfillResult)
    assert [o.occurrence_time for o in planned.value] == [start + timedelta(minutes=n) for n in range(3)]
    assert not list(queue.peek_messages(max_messages=32))  # nothing due was queued
    queued = _parsed(driver.sync("backfill", **backfill), models.BackfillResult)
    assert [o.execution_tag for o in queued.value] == [o.execution_tag for o in planned.value]

    def backfilled() -> list[Any]:
        return [h for h in http_target.requests if h.headers["x-ms-scheduler-expected-execution-time"] < z(end)]

    drain(api_server.runtime, 60, until=lambda: len(backfilled()) >= 3)
    assert [h.headers["idempotency-key"] for h in backfilled()] == [o.execution_tag for o in queued.value]

    # The ledger, filtered on status and occurrence time: the three backfilled occurrences, newest first.
    wanted = f"status eq 'Completed' and occurrenceTime ge {z(start)} and occurrenceTime lt {z(end)}"
    entries = [
        e.properties
        for e in _parsed(driver.sync("list_job_history", filter_=wanted), models.JobHistoryListResult).value
    ]
    assert [e.trigger for e in entries] == [models.OccurrenceTrigger.BACKFILL] * 3
    assert [e.execution_tag for e in entries] == [o.execution_tag for o in reversed(queued.value)]

    # A refusal parses as the ARM error the document names.
    backwards = dict(backfill, body=models.BackfillRequest(from_=start, to=start - timedelta(minutes=1)))
    refused = driver.detailed("backfill", **backwards)
    assert refused.status_code == 400 and _parsed(refused.parsed, models.ErrorResponse).error.code == "BadRequest"


def test_a_generated_client_reads_the_other_answers_as_described(
    generated: ModuleType, api_server: ApiServer, http_target: Any, clock: ManualClock
) -> None:
    driver, models = _driver(generated, api_server, http_target, clock), _part("models")
    client, version = driver.call["client"], driver.call["api_version"]
    # A collection PUT as a what-if: the plan it would have, nothing written.
    bigger = models.JobCollectionDefinition.from_dict(
        {"location": "westus", "properties": {"sku": {"name": "P10Premium"}}}
    )
    put_collection = _part("api.job_collections.job_collections_create_or_update")
    dry = _parsed(
        put_collection.sync(SUB, RG, JC, client=client, api_version=version, body=bigger, what_if=True),
        models.JobCollectionWhatIf,
    )
    assert dry.change_type == models.JobCollectionWhatIfChangetype.MODIFY
    assert dry.job_collection.properties.sku.name == models.SkuName.P10PREMIUM
    get_collection = _part("api.job_collections.job_collections_get")
    stored = _parsed(
        get_collection.sync(SUB, RG, JC, client=client, api_version=version), models.JobCollectionDefinition
    )
    assert stored.properties.sku.name == models.SkuName.STANDARD

    # Role assignments at the collection, with Microsoft.Authorization's api-version.
    roles = {n: _part(f"api.role_assignments.role_assignments_{n}_job_collection") for n in ("create_at", "get_at")}
    roles |= {n: _part(f"api.role_assignments.role_assignments_{n}_job_collection") for n in ("list_for", "delete_at")}
    authorization = models.RoleAssignmentsApiVersion("2022-04-01")
    name = str(uuid.uuid4())
    role = f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/{READER.id}"
    body = models.RoleAssignmentCreateParameters.from_dict(
        {"properties": {"roleDefinitionId": role, "principalId": str(uuid.uuid4())}}
    )
    at = {
        "subscription_id": SUB,
        "resource_group_name": RG,
        "job_collection_name": JC,
        "client": client,
        "api_version": authorization,
    }
    created = roles["create_at"].sync_detailed(role_assignment_name=name, body=body, **at)
    assert created.status_code == 201 and _parsed(created.parsed, models.RoleAssignment).name == name
    found = roles["get_at"].sync(role_assignment_name=name, **at)
    assert _parsed(found, models.RoleAssignment).properties.principal_type is None
    listed = _parsed(roles["list_for"].sync(filter_="atScope()", **at), models.RoleAssignmentListResult)
    assert name in [a.name for a in listed.value]
    removed = roles["delete_at"].sync_detailed(role_assignment_name=name, **at)
    assert removed.status_code == 200 and _parsed(removed.parsed, models.RoleAssignment).name == name
    assert roles["delete_at"].sync_detailed(role_assignment_name=name, **at).status_code == 204

    # Health and the documents themselves (anonymous, no api-version).
    health = _part("api.health.health_get").sync_detailed(client=client)
    assert health.status_code in (200, 503) and _parsed(health.parsed, models.HealthReport).status is not None
    document = _parsed(_part("api.open_api.open_api_get").sync(client=client), models.OpenApiDocument)
    assert document.info["version"] == "2016-03-01"
