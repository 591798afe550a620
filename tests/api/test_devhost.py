"""The real function_app.py under the project's local Functions host (devhost.LocalHost), driven by the
official client: proves the HTTP bindings route all 15 operations and the OpenAPI document."""

from __future__ import annotations

import json
import time
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from azure.core.exceptions import ResourceNotFoundError
from azure.mgmt.scheduler import models as m

from devhost.host import LocalHost

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def hosted(azurite, monkeypatch) -> Iterator[LocalHost]:
    suffix = uuid.uuid4().hex[:10]
    monkeypatch.setenv("AzureWebJobsStorage", azurite.connection_string)
    monkeypatch.setenv("SCHEDULER_TABLE_PREFIX", f"h{suffix}")
    monkeypatch.setenv("SCHEDULER_PRIVATE_TARGETS", "loopback")
    monkeypatch.setenv("SCHEDULER_AUTH", "none")  # the routing of every operation; keys: tests/operate/test_key_mode.py
    with LocalHost(REPO, load_settings=False) as host:
        yield host


def test_function_app_serves_every_operation(hosted, request) -> None:
    sdk_client = request.getfixturevalue("_sdk_factory")
    client = sdk_client(hosted.base_url)
    rg = "rg-host"
    client.job_collections.create_or_update(
        rg,
        "jc",
        m.JobCollectionDefinition(location="westus", properties=m.JobCollectionProperties(sku=m.Sku(name="Standard"))),
    )
    client.job_collections.patch(rg, "jc", m.JobCollectionDefinition(tags={"a": "b"}))
    assert client.job_collections.get(rg, "jc").tags == {"a": "b"}
    assert [c.name for c in client.job_collections.list_by_subscription()] == ["jc"]
    assert [c.name for c in client.job_collections.list_by_resource_group(rg)] == ["jc"]
    start = datetime.now(UTC) + timedelta(hours=1)
    client.jobs.create_or_update(
        rg,
        "jc",
        "j",
        m.JobDefinition(
            properties=m.JobProperties(
                start_time=start,
                recurrence=m.JobRecurrence(frequency="Hour", interval=1),
                action=m.JobAction(type="Http", request=m.HttpRequest(uri="http://127.0.0.1:9/", method="GET")),
            )
        ),
    )
    client.jobs.patch(rg, "jc", "j", m.JobDefinition(properties=m.JobProperties(state="Disabled")))
    assert client.jobs.get(rg, "jc", "j").properties.state == "disabled"
    assert [j.name for j in client.jobs.list(rg, "jc", filter="state eq 'Disabled'")] == ["jc/j"]
    client.jobs.run(rg, "jc", "j")
    assert list(client.jobs.list_job_history(rg, "jc", "j")) == []
    client.job_collections.begin_enable(rg, "jc").result()
    # The job follows once the host's dispatch trigger took the cascade the enable queued.
    deadline = time.monotonic() + 30
    while client.jobs.get(rg, "jc", "j").properties.state != "enabled" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert client.jobs.get(rg, "jc", "j").properties.state == "enabled"
    client.job_collections.begin_disable(rg, "jc").result()
    client.jobs.delete(rg, "jc", "j")
    client.job_collections.begin_delete(rg, "jc").result()
    with pytest.raises(ResourceNotFoundError):
        client.job_collections.get(rg, "jc")
    with urllib.request.urlopen(f"{hosted.base_url}/openapi.json") as response:
        assert len(json.load(response)["paths"]) == 9
