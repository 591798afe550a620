"""Bearer token validation over plain HTTP against the real function_app.py in `entra` mode: every bad token
is a 401 with ARM's code and a Bearer challenge, and a refused write stores nothing."""

from __future__ import annotations

import dataclasses
import uuid

import jwt
import pytest

from shared import api
from shared.runtime import Runtime
from shared.settings import AuthSettings, ConfigurationError, Settings
from shared.settings.auth import host_checks_keys
from tests.auth.conftest import OWNER, SUB, Scheduler
from tests.support.identity import TENANT, LocalIssuer, new_key

PATH = f"/subscriptions/{SUB}/resourceGroups/rg-tokens/providers/Microsoft.Scheduler/jobCollections/jc"
BODY = {"location": "westus", "properties": {"sku": {"name": "Standard"}}}


def _refused(scheduler: Scheduler, token: str, code: str) -> dict:
    response = scheduler.http("PUT", PATH, token, BODY)
    assert response.status_code == 401, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer authorization_uri=") and 'error="invalid_token"' in challenge
    assert scheduler.as_(OWNER, "GET", PATH).status_code == 404  # nothing was stored
    return error


def test_a_token_for_management_azure_com_is_refused(scheduler: Scheduler, issuer: LocalIssuer) -> None:
    error = _refused(
        scheduler, issuer.token(OWNER, audience="https://management.azure.com/"), "InvalidAuthenticationTokenAudience"
    )
    assert "'https://management.azure.com/'" in error["message"] and "api://scheduler-test" in error["message"]


def test_an_expired_token_is_refused_beyond_the_clock_skew(scheduler: Scheduler, issuer: LocalIssuer) -> None:
    _refused(scheduler, issuer.token(OWNER, lifetime=-120), "ExpiredAuthenticationToken")
    within_skew = issuer.token(OWNER, lifetime=-20)
    assert scheduler.http("GET", PATH, within_skew).status_code == 404  # accepted: the collection is just missing


def test_a_token_from_another_issuer_is_refused(scheduler: Scheduler, issuer: LocalIssuer) -> None:
    _refused(
        scheduler,
        issuer.token(OWNER, issuer="https://sts.windows.net/another-tenant/"),
        "InvalidAuthenticationTokenTenant",
    )


def test_the_v1_issuer_of_the_tenant_is_accepted(scheduler: Scheduler, issuer: LocalIssuer) -> None:
    token = issuer.token(OWNER, issuer=f"https://sts.windows.net/{TENANT}/")
    assert scheduler.http("GET", PATH, token).status_code == 404


@pytest.mark.parametrize(
    "forge",
    [
        "other key, same kid",
        "unknown kid",
        "hmac with the public key",
        "alg none",
        "no oid",
        "not a jwt",
        "tampered payload",
    ],
)
def test_forged_or_broken_tokens_are_refused(scheduler: Scheduler, issuer: LocalIssuer, forge: str) -> None:
    if forge == "other key, same kid":
        token = issuer.token(OWNER, key=new_key())
    elif forge == "unknown kid":
        token = issuer.token(OWNER, key=new_key(), kid="someone-elses-key")
    elif forge == "hmac with the public key":
        public = issuer.jwks()["keys"][0]
        token = jwt.encode(
            {"aud": "api://scheduler-test", "iss": issuer.issuer, "exp": 4102444800, "oid": OWNER},
            str(public["n"]).encode(),
            algorithm="HS256",
            headers={"kid": issuer.kid},
        )
    elif forge == "alg none":
        token = jwt.encode(
            {"aud": "api://scheduler-test", "iss": issuer.issuer, "exp": 4102444800, "oid": OWNER},
            None,
            algorithm="none",
            headers={"kid": issuer.kid},
        )
    elif forge == "no oid":
        claims = jwt.decode(issuer.token(OWNER), options={"verify_signature": False})
        del claims["oid"]
        token = jwt.encode(claims, issuer.key, algorithm="RS256", headers={"kid": issuer.kid})
    elif forge == "not a jwt":
        token = "definitely.not.ajwt"
    else:
        head, _, sig = issuer.token(new_uuid()).split(".")
        token = ".".join((head, issuer.token(OWNER).split(".")[1], sig))
    _refused(scheduler, token, "InvalidAuthenticationToken")


def new_uuid() -> str:
    return str(uuid.uuid4())


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer a b", "token"])
def test_a_malformed_authorization_header_is_refused(scheduler: Scheduler, header: str) -> None:
    response = scheduler.http("PUT", PATH, body=BODY, headers={"Authorization": header})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "AuthenticationFailed"


def test_the_openapi_document_stays_anonymous(scheduler: Scheduler) -> None:
    assert scheduler.http("GET", "/openapi.json", params={}).status_code == 200


def test_unreachable_signing_keys_are_a_503_and_accept_nothing(settings: Settings, issuer: LocalIssuer) -> None:
    auth = dataclasses.replace(issuer.settings(OWNER), metadata_url="http://127.0.0.1:9/tenant/v2.0/.well-known/x")
    rt = Runtime.create(dataclasses.replace(settings, auth=auth))
    request = api.ApiRequest(
        "GET",
        f"http://127.0.0.1{PATH}",
        {"subscriptionId": SUB},
        {"api-version": "2016-03-01"},
        headers={"Authorization": f"Bearer {issuer.token(OWNER)}"},
    )
    response = api.handle("JobCollections_ListBySubscription", request, rt)
    assert response.status == 503 and response.body["error"]["code"] == "ServiceUnavailable"


def test_the_auth_settings() -> None:
    assert AuthSettings.from_environment({}).mode == "key"  # unset: the host's keys, never open
    assert host_checks_keys({}) and host_checks_keys({"SCHEDULER_AUTH": "key"})
    assert not host_checks_keys({"SCHEDULER_AUTH": "entra"}) and not host_checks_keys({"SCHEDULER_AUTH": "none"})
    with pytest.raises(ConfigurationError):
        AuthSettings.from_environment({"SCHEDULER_AUTH": "entra"})
    with pytest.raises(ConfigurationError):
        AuthSettings.from_environment({"SCHEDULER_AUTH": "open"})
    entra = AuthSettings.from_environment(
        {
            "SCHEDULER_AUTH": "Entra",
            "SCHEDULER_AUTH_TENANT_ID": TENANT,
            "SCHEDULER_AUTH_AUDIENCE": "api://sched, 11111111-2222-3333-4444-555555555555",
            "SCHEDULER_AUTH_OWNER": "AAAAAAAA-0000-4000-8000-000000000001",
        }
    )
    assert entra.audiences == ("api://sched", "11111111-2222-3333-4444-555555555555")
    assert entra.metadata_url == f"https://login.microsoftonline.com/{TENANT}/v2.0/.well-known/openid-configuration"
    assert entra.owners == ("aaaaaaaa-0000-4000-8000-000000000001",)
    assert entra.authorization_uri == f"https://login.microsoftonline.com/{TENANT}"
