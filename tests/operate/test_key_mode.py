"""SCHEDULER_AUTH=key under the local host is closed: every management route answers 401 (empty body, as the
Functions host) without a Functions key or with a wrong one, and nothing runs or is stored; the right key, as the
x-functions-key header or ?code=, is served; the health probe, the OpenAPI document and the console's shell stay
anonymous."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from devhost.host import LocalHost
from devhost.keys import FUNCTION_KEY_SETTING
from shared.api.operations import OPERATIONS

REPO = Path(__file__).resolve().parents[2]
KEY = "a-functions-key-for-this-test-0123456789"
SUB = "5f3c1e2a-0000-4000-8000-00000000abcd"
VALUES = {
    "subscriptionId": SUB,
    "resourceGroupName": "rg-key",
    "jobCollectionName": "jc",
    "jobName": "j",
    "roleAssignmentName": str(uuid.uuid4()),
    "instant": "2026-12-01T09:00:00Z",
    "deadLetterId": "0000000000000000000-000000000000",
}
ANONYMOUS = {"OpenApi_Get", "Health_Get"}
API = {"api-version": "2016-03-01"}
COLLECTION = f"/subscriptions/{SUB}/resourceGroups/rg-key/providers/Microsoft.Scheduler/jobCollections/jc"


@pytest.fixture(scope="module")
def hosted(azurite) -> Iterator[LocalHost]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AzureWebJobsStorage", azurite.connection_string)
        env.setenv("SCHEDULER_TABLE_PREFIX", f"key{uuid.uuid4().hex[:10]}")
        env.setenv("SCHEDULER_AUTH", "key")
        env.setenv(FUNCTION_KEY_SETTING, KEY)
        with LocalHost(REPO, load_settings=False) as host:
            yield host


def _url(host: LocalHost, route: str) -> str:
    return f"{host.base_url}/" + re.sub(r"\{(\w+)\}", lambda m: VALUES[m.group(1)], route)


MANAGEMENT = [op for op in OPERATIONS if op.name not in ANONYMOUS]


@pytest.mark.parametrize("operation", MANAGEMENT, ids=[f"{op.name}-{op.route}" for op in MANAGEMENT])
def test_every_management_route_needs_the_key(hosted: LocalHost, operation) -> None:
    url = _url(hosted, operation.route)
    body = {"location": "westus", "properties": {"sku": {"name": "Standard"}}}
    for headers, params in (
        ({}, API),
        ({"x-functions-key": "wrong-" + KEY}, API),
        ({}, {**API, "code": KEY[:-1]}),
        ({"x-functions-key": ""}, {**API, "code": KEY}),
    ):
        answer = requests.request(operation.method, url, headers=headers, params=params, json=body, timeout=30)
        assert (answer.status_code, answer.content) == (401, b""), (operation.name, headers, params)
    got = requests.get(f"{hosted.base_url}{COLLECTION}", headers={"x-functions-key": KEY}, params=API, timeout=30)
    assert got.status_code == 404  # no refused write was stored


def test_the_right_key_is_served_as_header_or_code(hosted: LocalHost) -> None:
    url = f"{hosted.base_url}{COLLECTION}"
    put = requests.put(
        url,
        headers={"x-functions-key": KEY},
        params=API,
        timeout=30,
        json={"location": "westus", "properties": {"sku": {"name": "Standard"}}},
    )
    assert put.status_code == 201, put.text
    assert requests.get(url, params={**API, "code": KEY}, timeout=30).json()["name"] == "jc"
    listed = requests.get(
        f"{hosted.base_url}/subscriptions/{SUB}/providers/Microsoft.Scheduler/jobCollections",
        headers={"x-functions-key": KEY},
        params=API,
        timeout=30,
    )
    assert [c["name"] for c in listed.json()["value"]] == ["jc"]
    assert requests.delete(url, params={**API, "code": KEY}, timeout=30).status_code == 200


@pytest.mark.parametrize("path", ["health", "openapi.json", "console"])
def test_the_anonymous_routes_stay_anonymous(hosted: LocalHost, path: str) -> None:
    assert requests.get(f"{hosted.base_url}/{path}", timeout=30).status_code == 200
