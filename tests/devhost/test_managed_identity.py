"""The local host's managed-identity endpoint (devhost/managed_identity.py): App Service's protocol as azure-identity
speaks it, tokens a target validates with the published keys, the identity header required, and the host serving
one only when the environment names none (devhost/cli.py step 8)."""

from __future__ import annotations

import asyncio
import os

import jwt
import pytest
import requests

from devhost.cli import serve_local_identity
from devhost.managed_identity import SYSTEM_CLIENT_ID, LocalIdentity
from shared.actions.managed_identity import ManagedIdentityTokens


def test_the_host_serves_an_endpoint_only_when_the_environment_names_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDENTITY_ENDPOINT", "http://127.0.0.1:9/msi/token")
    monkeypatch.setenv("IDENTITY_HEADER", "the-platforms")
    assert serve_local_identity() is None
    monkeypatch.delenv("IDENTITY_ENDPOINT")
    monkeypatch.delenv("IDENTITY_HEADER")
    identity = serve_local_identity()
    assert identity is not None
    try:
        assert os.environ["IDENTITY_ENDPOINT"] == f"{identity.url}/msi/token"
        assert os.environ["IDENTITY_HEADER"] == identity.header and len(identity.header) >= 40
        tokens = ManagedIdentityTokens(("api://local-target",))
        token = asyncio.run(tokens.token("api://local-target"))  # azure-identity's App Service source, unchanged
        tokens.close()
        keys = requests.get(f"{identity.url}/discovery/keys", timeout=10).json()
        issuer = requests.get(f"{identity.url}/.well-known/openid-configuration", timeout=10).json()["issuer"]
        key = jwt.PyJWKSet.from_dict(keys)[identity.kid].key
        claims = jwt.decode(token, key, algorithms=["RS256"], audience="api://local-target", issuer=issuer)
        assert claims["appid"] == SYSTEM_CLIENT_ID and claims["exp"] - claims["iat"] == identity.lifetime
        assert identity.requests == 1
    finally:
        identity.stop()


def test_a_request_without_the_identity_header_or_the_protocols_version_is_refused() -> None:
    identity = LocalIdentity().start()
    try:
        query = {"api-version": "2019-08-01", "resource": "api://x"}
        url = identity.endpoint
        assert requests.get(url, params=query, timeout=10).status_code == 401
        assert requests.get(url, params=query, headers={"X-IDENTITY-HEADER": "guess"}, timeout=10).status_code == 401
        right = {"X-IDENTITY-HEADER": identity.header}
        old = {**query, "api-version": "2017-09-01"}
        assert requests.get(url, params=old, headers=right, timeout=10).status_code == 400
        answer = requests.get(url, params={**query, "client_id": "c-1"}, headers=right, timeout=10)
        assert answer.status_code == 200 and identity.requests == 1
        body = answer.json()
        assert set(body) == {"access_token", "expires_on", "resource", "token_type", "client_id"}
        assert (body["resource"], body["token_type"], body["client_id"]) == ("api://x", "Bearer", "c-1")
        assert int(body["expires_on"]) == jwt.decode(body["access_token"], options={"verify_signature": False})["exp"]
    finally:
        identity.stop()
