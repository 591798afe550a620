"""Write-time rules of Http actions: no framing or hop-by-hop headers, OAuth secrets bound to their client,
tenants that stay one path segment."""

from __future__ import annotations

import pytest

from shared.keys import JobKey
from tests.api.conftest import RG, SUB, InProcess

HOOK = "https://hooks.example.com/run"
OAUTH = {
    "type": "ActiveDirectoryOAuth",
    "tenant": "contoso.onmicrosoft.com",
    "audience": "https://hooks.example.com",
    "clientId": "client-1",
    "secret": "s3cr3t-value",
}


def _job(headers: dict[str, str] | None = None, authentication: dict | None = None) -> dict:
    request: dict = {"uri": HOOK, "method": "POST", "body": "x"}
    if headers is not None:
        request["headers"] = headers
    if authentication is not None:
        request["authentication"] = authentication
    return {"properties": {"action": {"type": "Https", "request": request}}}


@pytest.mark.parametrize(
    "name",
    [
        "Transfer-Encoding",
        "content-length",
        "Connection",
        "HOST",
        "Upgrade",
        "TE",
        "Trailer",
        "Keep-Alive",
        "Proxy-Authorization",
        "proxy-connection",
    ],
)
def test_framing_and_hop_by_hop_headers_are_refused_at_write_time(inproc: InProcess, name: str) -> None:
    inproc.put_collection("jc")
    response = inproc.put_job("jc", "j1", _job({"X-Fine": "1", name: "chunked"}), expect=400)
    assert response.body["error"]["message"].startswith(f"properties.action.request.headers.{name}:")
    assert inproc.get_job("jc", "j1").status == 404
    inproc.put_job("jc", "j1", _job({"X-Fine": "1"}))
    patched = inproc.call(
        "Jobs_Patch", "PATCH", "jc", "j1", body={"properties": {"action": {"request": {"headers": {name: "x"}}}}}
    )
    assert patched.status == 400, patched.body
    error = {"type": "Http", "request": {"uri": HOOK, "method": "GET", "headers": {name: "x"}}}
    body = _job() | {"properties": {"action": {**_job()["properties"]["action"], "errorAction": error}}}
    assert (
        inproc.put_job("jc", "j2", body, expect=400)
        .body["error"]["message"]
        .startswith("properties.action.errorAction.request.headers.")
    )


@pytest.mark.parametrize(
    "tenant",
    ["..", ".", "a/../b", "contoso..com", "-bad.com", "a" * 64 + ".com", "t%2F..", "ten ant", "tenant\n", "x" * 254],
)
def test_tenants_must_be_an_id_or_a_domain(inproc: InProcess, tenant: str) -> None:
    inproc.put_collection("jc")
    response = inproc.put_job("jc", "j1", _job(authentication={**OAUTH, "tenant": tenant}), expect=400)
    assert response.body["error"]["message"].startswith("properties.action.request.authentication.tenant:")


@pytest.mark.parametrize("tenant", ["contoso.onmicrosoft.com", "72f988bf-86f1-41af-91ab-2d7cd011db47", "common"])
def test_real_tenants_are_accepted(inproc: InProcess, tenant: str) -> None:
    inproc.put_collection("jc")
    inproc.put_job("jc", "j1", _job(authentication={**OAUTH, "tenant": tenant}))


@pytest.mark.parametrize(
    "member,value",
    [("audience", "https://management.azure.com/"), ("tenant", "fabrikam.onmicrosoft.com"), ("clientId", "client-2")],
)
def test_patching_what_an_oauth_secret_is_for_requires_the_secret_again(
    inproc: InProcess, member: str, value: str
) -> None:
    inproc.put_collection("jc")
    inproc.put_job("jc", "j1", _job(authentication=OAUTH))
    patch = {"properties": {"action": {"request": {"authentication": {member: value}}}}}
    refused = inproc.call("Jobs_Patch", "PATCH", "jc", "j1", body=patch)
    assert refused.status == 400, refused.body
    assert "secret" in refused.body["error"]["message"]
    stored = inproc.rt.store.jobs.get(JobKey(SUB, RG, "jc", "j1"))
    assert stored is not None and stored.properties.action.request.authentication.audience == OAUTH["audience"]
    # A GET -> modify -> PUT without the secret is refused the same way; with the secret both work.
    put = inproc.put_job("jc", "j1", _job(authentication={**OAUTH, member: value, "secret": None}), expect=400)
    assert "secret" in put.body["error"]["message"]
    patch["properties"]["action"]["request"]["authentication"]["secret"] = "another-secret"
    assert inproc.call("Jobs_Patch", "PATCH", "jc", "j1", body=patch).status == 200


def test_an_oauth_secret_survives_a_patch_of_something_else(inproc: InProcess) -> None:
    inproc.put_collection("jc")
    inproc.put_job("jc", "j1", _job(authentication=OAUTH))
    kept = inproc.call("Jobs_Patch", "PATCH", "jc", "j1", body={"properties": {"action": {"request": {"body": "y"}}}})
    assert kept.status == 200, kept.body
    stored = inproc.rt.store.jobs.get(JobKey(SUB, RG, "jc", "j1"))
    assert stored is not None and stored.properties.action.request.authentication.secret == "s3cr3t-value"


@pytest.mark.parametrize(
    "uri", ["https://user:pw@hooks.example.com/run", "https://user@hooks.example.com", "http://a:b@127.0.0.1:9/?x=@"]
)
def test_credentials_in_the_uri_are_refused(inproc: InProcess, uri: str) -> None:
    """They would sit in the stored definition and in every GET in the clear; `authentication` is for them."""
    inproc.put_collection("jc")
    job = {"properties": {"action": {"type": "Http", "request": {"uri": uri, "method": "GET"}}}}
    response = inproc.put_job("jc", "j1", job, expect=400)
    assert response.body["error"]["message"].startswith("properties.action.request.uri:")
    assert "pw" not in response.body["error"]["message"]


def test_an_at_sign_in_the_path_or_query_is_fine(inproc: InProcess) -> None:
    inproc.put_collection("jc")
    job = {
        "properties": {
            "action": {
                "type": "Http",
                "request": {"uri": "https://hooks.example.com/users/@me?mail=a@b.example", "method": "GET"},
            }
        }
    }
    inproc.put_job("jc", "j1", job)
