"""ManagedIdentity Http actions against a real local managed-identity endpoint (devhost/managed_identity.py: App
Service's protocol on loopback, RS256 JWTs signed with a key of its own) named through the platform's environment
(IDENTITY_ENDPOINT / IDENTITY_HEADER), and a real local target that answers 200 only to a token whose signature,
audience, issuer and expiry it checks. End to end: written through the API, queued, run by the executor, recorded."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import jwt
import pytest

from devhost.managed_identity import LocalIdentity
from shared.actions.http import HttpTarget
from shared.model import PREVIEW_API_VERSION, JobErrorAction
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.peers.servers import Hit, Server, serve
from tests.executor.support import context
from tests.support.scheduler_client import call, drain, make_collection

AUDIENCE = "api://target"
NEWER = {"api-version": PREVIEW_API_VERSION}
OLDER = {"api-version": "2016-03-01"}
PATIENCE = 30.0  # seconds for the executor and the recorder on a busy machine


@pytest.fixture
def identity(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalIdentity]:
    """The platform's managed-identity endpoint, as Azure Functions names it to the app's process."""
    local = LocalIdentity().start()
    for name, value in local.environment().items():
        monkeypatch.setenv(name, value)
    yield local
    local.stop()


class Validating:
    """A target that answers 200 to a bearer token of `identity` for AUDIENCE, and 401 to anything else."""

    def __init__(self, identity: LocalIdentity) -> None:
        self.identity = identity
        self.tokens: list[str] = []
        self.server: Server = serve(self)

    def __call__(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        scheme, _, token = hit.headers.get("authorization", "").partition(" ")
        try:
            claims = jwt.decode(
                token,
                self.identity.key.public_key(),
                algorithms=["RS256"],
                audience=AUDIENCE,
                issuer=self.identity.issuer,
                options={"require": ["exp", "aud", "iss"]},
            )
        except jwt.PyJWTError as exc:
            return 401, {}, f"refused: {type(exc).__name__}".encode()
        if scheme != "Bearer":
            return 401, {}, b"refused: not a bearer token"
        self.tokens.append(token)
        return 200, {}, f"hello {claims['oid']}".encode()


@pytest.fixture
def target(identity: LocalIdentity) -> Iterator[Validating]:
    validating = Validating(identity)
    yield validating
    validating.server.close()


def _action(url: str, audience: str = AUDIENCE, **auth: str) -> dict[str, Any]:
    authentication = {"type": "ManagedIdentity", "audience": audience, **auth}
    return {"type": "Http", "request": {"uri": url, "method": "POST", "authentication": authentication}}


def _runtime(settings: Settings, audiences: tuple[str, ...] = (AUDIENCE,)) -> Runtime:
    return Runtime.create(replace(settings, identity_audiences=audiences))


def _history(rt: Runtime, version: dict[str, str]) -> list[dict[str, Any]]:
    answer = call(rt, "Jobs_ListJobHistory", "GET", "job", query=version)
    assert answer.status == 200, answer.body
    return [entry["properties"] for entry in answer.body["value"]]


def _until(holds: Callable[[], bool], seconds: float = PATIENCE) -> None:
    deadline = time.monotonic() + seconds
    while not holds():
        assert time.monotonic() < deadline, "not within the patience"
        time.sleep(0.05)


def _put(rt: Runtime, action: dict[str, Any]) -> None:
    properties = {"action": {**action, "retryPolicy": {"retryType": "None"}}, "recurrence": {"frequency": "Hour"}}
    answer = call(rt, "Jobs_CreateOrUpdate", "PUT", "job", {"properties": properties}, query=NEWER)
    assert answer.status == 201, answer.body


def test_a_job_calls_its_target_with_a_token_of_the_apps_identity_asked_once(
    settings: Settings, identity: LocalIdentity, target: Validating, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    rt = _runtime(settings)
    try:
        make_collection(rt)
        _put(rt, _action(target.server.url))  # its first occurrence is due at once
        drain(rt, PATIENCE, until=lambda: len(target.server.hits) >= 1)
        assert call(rt, "Jobs_Run", "POST", "job").status == 200  # a second attempt within the token's life
        drain(rt, PATIENCE, until=lambda: len(target.server.hits) >= 2)
        completed = lambda: [e["status"] for e in _history(rt, NEWER)] == ["Completed", "Completed"]  # noqa: E731
        _until(completed)

        assert len(target.tokens) == 2 and target.tokens[0] == target.tokens[1]  # both validated, one token
        assert identity.requests == 1
        shown = json.dumps([_history(rt, NEWER), _history(rt, OLDER)])
        assert "hello " in shown and target.tokens[0] not in shown  # the target's answer, never the token
        assert target.tokens[0] not in caplog.text
        job = call(rt, "Jobs_Get", "GET", "job", query=OLDER).body  # 2016-03-01 does not know the type
        assert "authentication" not in job["properties"]["action"]["request"]
    finally:
        rt.close()


def test_an_endpoint_that_fails_fails_the_attempt_and_says_why(
    settings: Settings, target: Validating, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = serve(lambda hit: (500, {"Content-Type": "application/json"}, b'{"error": "unavailable"}'))
    monkeypatch.setenv("IDENTITY_ENDPOINT", f"{broken.url}/msi/token")
    rt = _runtime(settings)
    try:
        make_collection(rt)
        _put(rt, _action(target.server.url))
        drain(rt, PATIENCE, until=lambda: bool(broken.hits) and bool(_history(rt, NEWER)))
        _until(lambda: [e["status"] for e in _history(rt, NEWER)] == ["Failed"])
        entry = _history(rt, NEWER)[0]
        assert entry["message"] == (
            f"Http Action - Request to host '127.0.0.1' could not be authenticated: no ManagedIdentity token for "
            f"audience '{AUDIENCE}': the managed identity endpoint answered 500"
        )
        assert target.server.hits == []  # nothing was sent without a token
        assert all(hit.path.startswith("/msi/token?api-version=2019-08-01&resource=api") for hit in broken.hits)
    finally:
        rt.close()
        broken.close()


def test_the_request_is_app_services_and_a_user_assigned_identity_is_named(
    settings: Settings, identity: LocalIdentity, target: Validating
) -> None:
    http = HttpTarget(replace(settings, identity_audiences=(AUDIENCE,)))
    action = JobErrorAction.model_validate(_action(target.server.url, clientId="user-assigned-1"))
    result = http.run(action, context())
    assert result.succeeded, result.message
    claims = jwt.decode(target.tokens[0], options={"verify_signature": False})
    assert claims["appid"] == "user-assigned-1" and claims["aud"] == AUDIENCE
    http.close()


def test_attempts_that_need_one_token_at_once_ask_for_it_once(
    settings: Settings, identity: LocalIdentity, target: Validating
) -> None:
    http = HttpTarget(replace(settings, identity_audiences=(AUDIENCE,)))
    action = JobErrorAction.model_validate(_action(target.server.url))

    async def herd() -> list[bool]:
        return [r.succeeded for r in await asyncio.gather(*(http.run_async(action, context()) for _ in range(8)))]

    assert asyncio.run(herd()) == [True] * 8
    assert identity.requests == 1
    http.close()  # the credential's connections: a later attempt opens new ones, and a new credential asks again
    assert http.run(action, context()).succeeded and identity.requests == 2


@pytest.mark.parametrize(
    ("audiences", "audience", "allowed"),
    [
        ((), AUDIENCE, False),  # none by default: the identity is the app's own
        ((AUDIENCE,), "https://storage.azure.com/", False),
        ((AUDIENCE,), "API://Target/", True),  # as the resource is compared: case and a trailing slash aside
        ((AUDIENCE,), f"{AUDIENCE}/.default", True),
        (("*",), "https://anything.example", True),
    ],
)
def test_only_the_audiences_the_deployment_allows_are_asked_for(
    settings: Settings, identity: LocalIdentity, audiences: tuple[str, ...], audience: str, allowed: bool
) -> None:
    answered = serve(lambda hit: (200, {}, b"ok"))
    http = HttpTarget(replace(settings, identity_audiences=audiences))
    try:
        result = http.run(JobErrorAction.model_validate(_action(answered.url, audience)), context())
    finally:
        http.close()
        answered.close()
    assert result.succeeded is allowed, result.message
    assert identity.requests == (1 if allowed else 0)
    if not allowed:
        assert result.message.endswith(
            "this deployment does not allow that audience (SCHEDULER_IDENTITY_AUDIENCES names the ones it does)"
        )


def test_without_the_platforms_variables_the_attempt_says_the_app_has_no_identity(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, http_target
) -> None:
    monkeypatch.delenv("IDENTITY_ENDPOINT", raising=False)
    monkeypatch.delenv("IDENTITY_HEADER", raising=False)
    http = HttpTarget(replace(settings, identity_audiences=("*",)))
    result = http.run(JobErrorAction.model_validate(_action(http_target.url)), context())
    assert not result.succeeded and result.message.endswith(
        "the app has no managed identity here (IDENTITY_ENDPOINT and IDENTITY_HEADER are not set)"
    )
    assert http_target.requests == []


def test_the_allowed_audiences_are_a_comma_list_and_none_by_default() -> None:
    env = {"AzureWebJobsStorage": "UseDevelopmentStorage=true"}
    assert Settings.from_environment(env).identity_audiences == ()
    listed = Settings.from_environment({**env, "SCHEDULER_IDENTITY_AUDIENCES": " api://a , https://b.example/,, "})
    assert listed.identity_audiences == ("api://a", "https://b.example/")
