"""Fixtures of the identity tests: the local token issuer, and the real function_app.py under the local host
in `entra` mode (its tokens validated against the issuer over loopback, its role assignments in Azurite)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from azure.core.pipeline.policies import SansIOHTTPPolicy
from azure.mgmt.scheduler import SchedulerManagementClient

from devhost.host import LocalHost
from tests.support.identity import AUDIENCE, LocalIssuer, MintedCredential, local_issuer, new_id

REPO = Path(__file__).resolve().parents[2]
SUB = "0b1f6471-1bf0-4dda-aec3-111122223333"
OWNER = "9a1a1a1a-0000-4000-8000-000000000001"  # the bootstrap Owner (SCHEDULER_AUTH_OWNER)
API = {"api-version": "2016-03-01"}
ROLES_API = {"api-version": "2022-04-01"}
OWNER_ROLE = "8e3af657-a8ff-443c-a75c-2fe8c4bcb635"
CONTRIBUTOR_ROLE = "b24988ac-6180-42a0-ab88-20f7382dd24c"
READER_ROLE = "acdd72a7-3385-48ef-bd42-f606fba81ae7"


class AllowHttp(SansIOHTTPPolicy):
    """The bearer policy refuses plain http unless the request context says otherwise (local host only)."""

    def on_request(self, request: Any) -> None:
        request.context["enforce_https"] = False


@pytest.fixture(scope="session")
def issuer() -> Iterator[LocalIssuer]:
    with local_issuer() as running:
        yield running


@dataclass
class Scheduler:
    """The hosted app in `entra` mode, and ways to call it as a given principal."""

    host: LocalHost
    issuer: LocalIssuer

    @property
    def url(self) -> str:
        return self.host.base_url

    def client(self, oid: str, **claims: Any) -> SchedulerManagementClient:
        """The official client, as documented: tokens for the scheduler's own audience via credential_scopes."""
        return SchedulerManagementClient(
            MintedCredential(self.issuer, oid, **claims),
            SUB,
            base_url=self.url,
            credential_scopes=[f"{AUDIENCE}/.default"],
            per_call_policies=[AllowHttp()],
            retry_total=0,
            polling_interval=0,
        )

    def http(
        self,
        method: str,
        path: str,
        token: str | None = None,
        body: Any = None,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> requests.Response:
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        return requests.request(
            method, f"{self.url}{path}", params=API if params is None else params, json=body, headers=sent, timeout=30
        )

    def as_(
        self, oid: str, method: str, path: str, body: Any = None, params: dict[str, str] | None = None, **claims: Any
    ) -> requests.Response:
        return self.http(method, path, self.issuer.token(oid, **claims), body, params)

    def assign(self, principal: str, role: str, scope: str, by: str = OWNER, expect: int = 201) -> str:
        name = new_id()
        response = self.as_(
            by,
            "PUT",
            f"{scope}/providers/Microsoft.Authorization/roleAssignments/{name}",
            {
                "properties": {
                    "roleDefinitionId": f"/subscriptions/{SUB}/providers/Microsoft.Authorization/"
                    f"roleDefinitions/{role}",
                    "principalId": principal,
                }
            },
            params=ROLES_API,
        )
        assert response.status_code == expect, response.text
        return name


def group_scope(group: str) -> str:
    return f"/subscriptions/{SUB}/resourceGroups/{group}"


def collection_scope(group: str, collection: str) -> str:
    return f"{group_scope(group)}/providers/Microsoft.Scheduler/jobCollections/{collection}"


@pytest.fixture(scope="module")
def scheduler(azurite, issuer: LocalIssuer) -> Iterator[Scheduler]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AzureWebJobsStorage", azurite.connection_string)
        env.setenv("SCHEDULER_TABLE_PREFIX", f"auth{uuid.uuid4().hex[:10]}")
        env.setenv("SCHEDULER_PRIVATE_TARGETS", "loopback")
        for name, value in issuer.environment(OWNER).items():
            env.setenv(name, value)
        with LocalHost(REPO, load_settings=False) as host:
            yield Scheduler(host, issuer)
