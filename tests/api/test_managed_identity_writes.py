"""ManagedIdentity authentication on the wire (newer api-version): `audience` required, `clientId` optional, nothing
secret taken; accepted by every version on input like every extension, shown to 2016-03-01 as no authentication
(the official client has no class for the type, and cannot send back even `NotSpecified`), and kept by a 2016-03-01
read-modify-write; outbound authentication all the same for the Free plan."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from shared.model.versions import NEWEST, STABLE
from tests.api.conftest import RG, InProcess

OLD, NEW = {"api-version": STABLE}, {"api-version": NEWEST.name}
IDENTITY = {"type": "ManagedIdentity", "audience": "api://target", "clientId": "11111111-2222-3333-4444-555555555555"}
PATH = "properties.action.request.authentication"


def _job(authentication: dict[str, Any]) -> dict[str, Any]:
    request = {"uri": "https://hooks.example.com/run", "method": "POST", "authentication": authentication}
    return {"properties": {"action": {"type": "Https", "request": request}, "recurrence": {"frequency": "Hour"}}}


def _put(
    inproc: InProcess, authentication: dict[str, Any], version: dict[str, str] = NEW, expect: int = 201, job: str = "j"
) -> Any:
    answer = inproc.call("Jobs_CreateOrUpdate", "PUT", "jc", job, body=_job(authentication), query=version)
    assert answer.status == expect, answer.body
    return answer.body


def _shown(inproc: InProcess, version: dict[str, str], job: str = "j") -> Any:
    answer = inproc.call("Jobs_Get", "GET", "jc", job, query=version)
    assert answer.status == 200, answer.body
    return answer.body["properties"]["action"]["request"].get("authentication")


@pytest.mark.parametrize(
    ("authentication", "refused_at", "message"),
    [
        (IDENTITY, None, None),
        ({"type": "managedidentity", "audience": "https://storage.azure.com/"}, None, None),  # any case, no clientId
        ({"type": "ManagedIdentity"}, "audience", "audience required for 'ManagedIdentity' authentication."),
        ({"type": "ManagedIdentity", "audience": ""}, "audience", "audience required"),
        ({**IDENTITY, "secret": "s3cr3t"}, "secret", "'secret' does not apply to 'ManagedIdentity' authentication"),
        ({**IDENTITY, "password": "pw"}, "password", "no secret is stored for it"),
        ({**IDENTITY, "pfx": "MIIB"}, "pfx", "'pfx' does not apply"),
        ({**IDENTITY, "tenant": "contoso.com"}, "tenant", "'tenant' does not apply"),
        ({**IDENTITY, "username": "u"}, "username", "'username' does not apply"),
    ],
)
def test_a_managed_identity_needs_an_audience_and_takes_no_secret(
    inproc: InProcess, authentication: dict[str, Any], refused_at: str | None, message: str | None
) -> None:
    inproc.put_collection("jc")
    for job, version in (("new", NEW), ("old", OLD)):  # every version takes it on input, as every extension
        body = _put(inproc, authentication, version, expect=201 if refused_at is None else 400, job=job)
        if refused_at is None:
            assert _shown(inproc, NEW, job) == authentication | {"type": "ManagedIdentity"}
        else:
            error = body["error"]
            assert error["code"] == "BadRequest" and error["message"].startswith(f"{PATH}.{refused_at}:"), error
            assert message in error["message"]


def test_2016_is_shown_no_authentication_and_its_writes_keep_the_identity(inproc: InProcess) -> None:
    inproc.put_collection("jc")
    _put(inproc, IDENTITY)
    assert _shown(inproc, OLD) is None
    assert _shown(inproc, NEW) == IDENTITY
    old = inproc.call("Jobs_Get", "GET", "jc", "j", query=OLD).body
    old["properties"]["action"]["request"]["uri"] = "https://hooks.example.com/changed"
    written = inproc.call("Jobs_CreateOrUpdate", "PUT", "jc", "j", body={"properties": old["properties"]}, query=OLD)
    assert written.status == 200, written.body
    assert "authentication" not in written.body["properties"]["action"]["request"]
    assert _shown(inproc, NEW) == IDENTITY
    # What a 2016-03-01 write changes, it changes: Basic replaces the identity, and no authentication removes it.
    basic = {"type": "Basic", "username": "u", "password": "pw"}
    patch = {"properties": {"action": {"request": {"authentication": basic}}}}
    assert inproc.call("Jobs_Patch", "PATCH", "jc", "j", body=patch, query=OLD).status == 200
    assert _shown(inproc, NEW) == {"type": "Basic", "username": "u"}
    _put(inproc, IDENTITY, expect=200)
    gone = {"properties": {"action": {"request": {"authentication": None}}}}
    assert inproc.call("Jobs_Patch", "PATCH", "jc", "j", body=gone, query=OLD).status == 200
    assert (
        "authentication"
        not in inproc.call("Jobs_Get", "GET", "jc", "j", query=NEW).body["properties"]["action"]["request"]
    )


def test_the_official_client_read_modify_write_keeps_the_identity(client, inproc: InProcess) -> None:
    inproc.put_collection("jc")
    _put(inproc, IDENTITY)
    job = client.jobs.get(RG, "jc", "j")  # azure-mgmt-scheduler: 2016-03-01
    assert job.properties.action.request.authentication is None
    job.properties.action.request.uri = "https://hooks.example.com/changed"
    client.jobs.create_or_update(RG, "jc", "j", job)
    client.jobs.patch(RG, "jc", "j", client.jobs.get(RG, "jc", "j"))  # PowerShell's full-object PATCH
    after = inproc.call("Jobs_Get", "GET", "jc", "j", query=NEW).body["properties"]["action"]["request"]
    assert after["authentication"] == IDENTITY and after["uri"] == "https://hooks.example.com/changed"


def test_the_free_plan_refuses_it_as_outbound_authentication(inproc: InProcess) -> None:
    inproc.put_collection("jc", sku="Free")
    error = _put(inproc, IDENTITY, expect=409)["error"]
    assert error["code"] == "Conflict" and "uses outbound authentication, which the Free plan" in error["message"]


def test_only_the_newer_openapi_document_names_the_type(api_server) -> None:
    for name, known in (("openapi.json", False), (f"openapi-{NEWEST.name}.json", True)):
        with urllib.request.urlopen(f"{api_server.url}/{name}") as response:
            schemas = json.load(response)["components"]["schemas"]
        assert ("ManagedIdentity" in schemas["HttpAuthenticationType"]["enum"]) is known
