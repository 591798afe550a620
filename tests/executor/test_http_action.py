"""Http/Https actions against real local servers: TLS with a test CA, client certificates, OAuth, timeouts,
redirects, body truncation and the private-target policy."""

from __future__ import annotations

import base64
from dataclasses import replace

from shared.actions.base import MAX_BODY_BYTES
from shared.actions.http import HttpTarget
from shared.model import JobErrorAction
from shared.private_targets import PrivateTargets
from shared.settings import Settings
from tests.executor.peers.servers import serve
from tests.executor.peers.tls import TestCA
from tests.executor.support import context


def http_action(uri: str, method: str = "GET", **request: object) -> JobErrorAction:
    return JobErrorAction.model_validate({"type": "Http", "request": {"uri": uri, "method": method, **request}})


def test_request_carries_method_body_headers_and_metadata(settings: Settings, http_target) -> None:
    ctx = context(attempt=2)
    action = http_action(
        f"{http_target.url}/hook?x=1",
        "put",
        body="payload",
        headers={"Content-Type": "text/plain", "X-Custom": "1", "x-ms-scheduler-jobid": "spoofed"},
    )
    result = HttpTarget(settings).run(action, ctx)
    assert result.succeeded
    hit = http_target.requests[0]
    assert (hit.method, hit.path, hit.body) == ("PUT", "/hook?x=1", b"payload")
    assert hit.headers["x-custom"] == "1" and hit.headers["content-type"] == "text/plain"
    assert hit.headers["x-ms-scheduler-jobid"] == "job1"  # users cannot override the metadata
    assert hit.headers["x-ms-scheduler-attempt"] == "3"
    assert hit.headers["x-ms-execution-tag"] == ctx.execution_id
    assert hit.headers["x-ms-client-request-id"] == ctx.client_request_id
    assert result.message.startswith("Http Action - Response from host '127.0.0.1': 'OK' Response Headers: ")
    assert result.message.endswith("Body: hello from the target")


def test_basic_authentication_is_sent_and_never_reported(settings: Settings, http_target) -> None:
    action = http_action(http_target.url, authentication={"type": "Basic", "username": "u", "password": "pw-123"})
    result = HttpTarget(settings).run(action, context())
    assert result.succeeded
    assert http_target.requests[0].headers["authorization"] == "Basic " + base64.b64encode(b"u:pw-123").decode()
    assert "pw-123" not in result.message


def test_non_2xx_fails_and_history_keeps_at_most_2048_bytes_of_body(settings: Settings) -> None:
    big = b"x" * (MAX_BODY_BYTES + 5000)
    server = serve(lambda hit: (503, {"Content-Type": "text/plain"}, big))
    try:
        result = HttpTarget(settings).run(http_action(server.url), context())
    finally:
        server.close()
    assert not result.succeeded
    assert "'Service Unavailable'" in result.message
    assert result.message.endswith("Body: " + "x" * MAX_BODY_BYTES)


def test_redirects_are_not_followed(settings: Settings, http_target) -> None:
    server = serve(lambda hit: (302, {"Location": http_target.url}, b""))
    try:
        result = HttpTarget(settings).run(http_action(server.url), context())
    finally:
        server.close()
    assert not result.succeeded and "'Found'" in result.message
    assert http_target.requests == []


def test_a_slow_target_times_out(settings: Settings) -> None:
    server = serve(lambda hit: (200, {}, b"late"), delay=2.0)
    try:
        result = HttpTarget(settings, timeout=0.5).run(http_action(server.url), context())
    finally:
        server.close()
    assert not result.succeeded
    assert result.message == "Http Action - Request to host '127.0.0.1' timed out after 0.5 s"


def test_connection_refused_is_a_failed_attempt_that_says_nothing_listens(settings: Settings) -> None:
    server = serve(lambda hit: (200, {}, b""))
    url = server.url
    server.close()
    result = HttpTarget(settings).run(http_action(url), context())
    assert not result.succeeded
    assert result.message == (
        "Http Action - Request to host '127.0.0.1' failed: "
        "ConnectionError (connection refused: nothing listens on the target's port)"
    )


def test_private_targets_are_refused_unless_allowed(settings: Settings, http_target) -> None:
    strict = HttpTarget(replace(settings, private_targets=PrivateTargets()))
    for url in (http_target.url, http_target.url.replace("127.0.0.1", "localhost")):
        result = strict.run(http_action(url), context())
        assert not result.succeeded
        assert "was refused" in result.message and "resolves to an internal address" in result.message
        assert "the entry 'loopback'" in result.message and "SCHEDULER_PRIVATE_TARGETS allows it" in result.message
    assert http_target.requests == []  # refused before a byte was sent
    assert HttpTarget(settings).run(http_action(http_target.url), context()).succeeded


def test_https_verifies_the_server_against_the_trust_store(settings: Settings, pki, https_server) -> None:
    trusting = HttpTarget(settings, cafile=str(pki.ca_file))
    result = trusting.run(http_action(https_server.url, type="Https"), context())
    assert result.succeeded and result.message.endswith("Body: secure hello")
    other_ca = TestCA("Another CA").pem_file(pki.folder / "..")
    refusing = HttpTarget(settings, cafile=str(other_ca))
    result = refusing.run(http_action(https_server.url), context())
    assert not result.succeeded
    assert "SSLError (CERTIFICATE_VERIFY_FAILED)" in result.message
    wrong_name = https_server.url.replace("127.0.0.1", "localhost")  # same server, a name its certificate lacks
    result = trusting.run(http_action(wrong_name), context())
    assert not result.succeeded and "CERTIFICATE_VERIFY_FAILED" in result.message


def test_client_certificate_is_presented_from_the_pfx(settings: Settings, pki, mtls_server, http_target) -> None:
    target = HttpTarget(settings, cafile=str(pki.ca_file))
    pfx = pki.client.pfx("pfx-pass", chain=[pki.ca.certificate])
    auth = {"type": "ClientCertificate", "pfx": pfx, "password": "pfx-pass"}
    for _ in range(2):  # the second attempt reuses the cached context
        result = target.run(http_action(mtls_server.url, authentication=auth), context())
        assert result.succeeded, result.message
    assert [hit.client_subject for hit in mtls_server.hits] == ["Scheduler Client", "Scheduler Client"]
    without = target.run(http_action(mtls_server.url), context())
    assert not without.succeeded and len(mtls_server.hits) == 2
    wrong = target.run(http_action(mtls_server.url, authentication={**auth, "password": "nope"}), context())
    assert not wrong.succeeded
    assert wrong.message.endswith(
        "could not be authenticated: ClientCertificate: the pfx could not be opened with the given password"
    )
    assert "nope" not in wrong.message and pfx[:40] not in wrong.message
    garbage = target.run(http_action(mtls_server.url, authentication={**auth, "pfx": "not base64!"}), context())
    assert not garbage.succeeded and "not valid base64" in garbage.message
    # A certificate works over plain HTTP too: it simply is not asked for.
    assert target.run(http_action(http_target.url, authentication=auth), context()).succeeded


def test_active_directory_oauth_token_is_fetched_cached_and_sent(
    settings: Settings, http_target, token_endpoint
) -> None:
    server, endpoint = token_endpoint
    target = HttpTarget(replace(settings, aad_authority_host=server.url))
    auth = {
        "type": "ActiveDirectoryOAuth",
        "tenant": "contoso.onmicrosoft.com",
        "clientId": "client-1",
        "secret": "s3cr3t-value",
        "audience": "https://management.core.windows.net/",
    }
    for _ in range(2):
        assert target.run(http_action(http_target.url, authentication=auth), context()).succeeded
    assert len(endpoint.issued) == 1  # cached until it expires
    token = endpoint.issued[0]["token"]
    assert endpoint.issued[0] == {"tenant": "contoso.onmicrosoft.com", "resource": auth["audience"], "token": token}
    assert [r.headers["authorization"] for r in http_target.requests] == [f"Bearer {token}"] * 2
    other = {**auth, "audience": "https://vault.azure.net"}
    assert target.run(http_action(http_target.url, authentication=other), context()).succeeded
    assert len(endpoint.issued) == 2  # one token per audience

    refused = target.run(http_action(http_target.url, authentication={**auth, "secret": "wrong"}), context())
    assert not refused.succeeded
    assert refused.message == (
        "Http Action - Request to host '127.0.0.1' could not be authenticated: no ActiveDirectoryOAuth token "
        "for tenant 'contoso.onmicrosoft.com': the token endpoint answered 401 (invalid_client)"
    )
    assert len(http_target.requests) == 3  # the target was not called without a token


def test_short_lived_tokens_are_renewed(settings: Settings, http_target, token_endpoint) -> None:
    server, endpoint = token_endpoint
    endpoint.expires_in = 0  # already due for renewal when it arrives
    target = HttpTarget(replace(settings, aad_authority_host=server.url))
    auth = {
        "type": "ActiveDirectoryOAuth",
        "tenant": "t1",
        "clientId": "client-1",
        "secret": "s3cr3t-value",
        "audience": "https://management.core.windows.net/",
    }
    for _ in range(2):
        assert target.run(http_action(http_target.url, authentication=auth), context()).succeeded
    assert len(endpoint.issued) == 2
