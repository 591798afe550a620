"""Request bodies as ARM reads them: JSON only (415), no duplicate members, int32 bounds, sizes in bytes as stored."""

from __future__ import annotations

import json

import pytest
import requests

from tests.api.conftest import InProcess, V

COLLECTION_PATH = "/subscriptions/sub-api/resourceGroups/rg-api/providers/Microsoft.Scheduler/jobCollections/jc"


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "application/xml", "multipart/form-data; boundary=x"],
)
def test_a_body_that_is_not_json_is_a_415(api_server, content_type: str) -> None:
    body = json.dumps({"location": "westus"})
    response = requests.put(
        api_server.url + COLLECTION_PATH, params=V, data=body, headers={"Content-Type": content_type}, timeout=10
    )
    assert response.status_code == 415, response.text
    assert response.json()["error"]["code"] == "UnsupportedMediaType"
    assert requests.get(api_server.url + COLLECTION_PATH, params=V, timeout=10).status_code == 404  # nothing stored


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"],
)
def test_json_media_types_are_read(api_server, content_type: str) -> None:
    response = requests.put(
        api_server.url + COLLECTION_PATH,
        params=V,
        data=json.dumps({"location": "westus"}),
        headers={"Content-Type": content_type},
        timeout=10,
    )
    assert response.status_code == 201, response.text


@pytest.mark.parametrize(
    "raw",
    [
        b'{"location": "westus", "location": "eastus"}',
        b'{"location": "westus", "tags": {"a": "1", "a": "2"}}',
        b'{"location": "westus", "Location": "eastus"}',
        b'{"location": "westus", "properties": {"sku": {"name": "Free"}, "SKU": {"name": "Standard"}}}',
    ],
)
def test_duplicate_members_are_a_400(inproc: InProcess, raw: bytes) -> None:
    response = inproc.call("JobCollections_CreateOrUpdate", "PUT", "jc", raw=raw)
    assert response.status == 400, response.body
    assert "twice" in response.body["error"]["message"]
    assert inproc.call("JobCollections_Get", "GET", "jc").status == 404


@pytest.mark.parametrize(
    "quota",
    [
        {"maxJobCount": 2**31},
        {"maxJobCount": 2**63},
        {"maxJobOccurrence": 2**63},
        {"maxJobOccurrence": -(2**31) - 1},
        {"maxRecurrence": {"frequency": "Minute", "interval": 2**31}},
    ],
)
def test_int32_quota_fields_out_of_range_are_a_400(inproc: InProcess, quota: dict) -> None:
    response = inproc.call(
        "JobCollections_CreateOrUpdate", "PUT", "jc", body={"location": "westus", "properties": {"quota": quota}}
    )
    assert response.status == 400, response.body
    assert response.body["error"]["message"].startswith("properties.quota.")


def test_int32_quota_fields_at_their_bounds_are_accepted(inproc: InProcess) -> None:
    quota = {
        "maxJobCount": 2**31 - 1,
        "maxJobOccurrence": 2**31 - 1,
        "maxRecurrence": {"frequency": "Minute", "interval": 2**31 - 1},
    }
    response = inproc.call(
        "JobCollections_CreateOrUpdate", "PUT", "jc", body={"location": "westus", "properties": {"quota": quota}}
    )
    assert response.status == 201, response.body
    assert response.body["properties"]["quota"]["maxJobCount"] == 2**31 - 1


@pytest.mark.parametrize("letter", ["\u00e9", "\u4e2d", "\U0001f600"])
def test_long_non_ascii_tags_are_a_400_not_a_500(inproc: InProcess, letter: str) -> None:
    """Under 16,000 characters as sent, but several times that as stored (escaped JSON) and in UTF-8 bytes."""
    tags = {f"t{i}": letter * 250 for i in range(20)}  # 5,000 characters
    for operation, method in (("JobCollections_CreateOrUpdate", "PUT"), ("JobCollections_Patch", "PATCH")):
        response = inproc.call(operation, method, "jc", body={"location": "westus", "tags": tags})
        if operation == "JobCollections_Patch":
            inproc.put_collection("jc")
            response = inproc.call(operation, method, "jc", body={"tags": tags})
        assert response.status == 400, response.body
        assert "bytes" in response.body["error"]["message"]
    assert inproc.call("JobCollections_Get", "GET", "jc").body.get("tags") is None  # the PATCH changed nothing


def test_a_non_ascii_job_is_measured_as_stored(inproc: InProcess) -> None:
    inproc.put_collection("jc")
    job = inproc.http_job()
    job["properties"]["action"]["request"]["body"] = "\u4e2d" * 4000  # 12,000 bytes sent, 24,000 stored
    raw = json.dumps(job, ensure_ascii=False).encode()
    response = inproc.call("Jobs_CreateOrUpdate", "PUT", "jc", "j1", raw=raw)
    assert response.status == 400 and "bytes as stored" in response.body["error"]["message"]
    job["properties"]["action"]["request"]["body"] = "\u4e2d" * 2000
    inproc.put_job("jc", "j1", job, expect=201)
    assert inproc.get_job("jc", "j1").body["properties"]["action"]["request"]["body"] == "\u4e2d" * 2000


def test_the_body_limit_counts_bytes(inproc: InProcess) -> None:
    raw = json.dumps({"location": "westus", "tags": {"x": "\u00e9" * 9000}}, ensure_ascii=False).encode()
    assert len(raw) > 16_000 > len(raw.decode())
    response = inproc.call("JobCollections_CreateOrUpdate", "PUT", "jc", raw=raw)
    assert response.status == 400 and "bytes" in response.body["error"]["message"]
