"""A local Entra ID stand-in for tests: a signing key, its OIDC metadata and JWKS served over loopback HTTP,
and tokens minted with it. The scheduler validates these exactly as it validates Entra ID's (nothing of the
validator is patched): it fetches the metadata, then the keys, and checks signature, issuer, audience and
lifetime.

For a browser signing in (the console), it also plays the tenant's OAuth 2.0 endpoints for a single-page
app: `/{tenant}/oauth2/v2.0/authorize` consents at once as `signed_in` and redirects back with a one-time
code, refusing a client or redirect URI it does not know, or a request without an S256 code challenge;
`/{tenant}/oauth2/v2.0/token` redeems the code only with the PKCE verifier whose SHA-256 is the challenge,
the same client and redirect URI, and answers with CORS headers as Entra ID does for SPA redirect URIs;
`/{tenant}/oauth2/v2.0/logout` redirects to `post_logout_redirect_uri`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from azure.core.credentials import AccessToken
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from shared.settings import AuthSettings

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
AUDIENCE = "api://scheduler-test"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class LocalIssuer:
    """The tenant's token service on 127.0.0.1: `/{tenant}/v2.0/.well-known/openid-configuration` and
    `/{tenant}/discovery/v2.0/keys`. `requests` counts what was fetched."""

    url: str = ""
    key: rsa.RSAPrivateKey = field(default_factory=new_key)
    kid: str = "local-key-1"
    requests: list[str] = field(default_factory=list)
    # The console's app registration: its client id and SPA redirect URIs; who signs in at /authorize.
    client_id: str = "console-client-id"
    redirect_uris: set[str] = field(default_factory=set)
    signed_in: str = ""
    signed_in_upn: str = ""
    token_lifetime: int = 3600
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    redeemed: list[dict[str, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    @property
    def metadata_url(self) -> str:
        return f"{self.url}/{TENANT}/v2.0/.well-known/openid-configuration"

    @property
    def issuer(self) -> str:
        return f"{self.url}/{TENANT}/v2.0"

    def settings(self, *owners: str) -> AuthSettings:
        return AuthSettings(
            mode="entra",
            tenant_id=TENANT,
            audiences=(AUDIENCE,),
            metadata_url=self.metadata_url,
            owners=tuple(o.lower() for o in owners),
        )

    def environment(self, *owners: str) -> dict[str, str]:
        """The same settings as app settings (for the real function_app.py under the local host)."""
        return {
            "SCHEDULER_AUTH": "entra",
            "SCHEDULER_AUTH_TENANT_ID": TENANT,
            "SCHEDULER_AUTH_AUDIENCE": AUDIENCE,
            "SCHEDULER_AUTH_METADATA_URL": self.metadata_url,
            "SCHEDULER_AUTH_OWNER": ",".join(owners),
        }

    def token(
        self,
        oid: str,
        *,
        audience: str = AUDIENCE,
        groups: list[str] | None = None,
        lifetime: int = 3600,
        issuer: str | None = None,
        key: rsa.RSAPrivateKey | None = None,
        kid: str | None = None,
        upn: str | None = None,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload: dict[str, Any] = {
            "aud": audience,
            "iss": issuer or self.issuer,
            "iat": now - 5,
            "nbf": now - 5,
            "exp": now + lifetime,
            "oid": oid,
            "tid": TENANT,
            "sub": oid,
            "ver": "2.0",
            "scp": "user_impersonation",
            "preferred_username": upn or f"{oid[:8]}@contoso.example",
            **claims,
        }
        if groups is not None:
            payload["groups"] = groups
        return jwt.encode(payload, key or self.key, algorithm="RS256", headers={"kid": kid or self.kid})

    def jwks(self) -> dict[str, Any]:
        public = RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def authorize(self, query: dict[str, str]) -> tuple[int, str]:
        """(status, Location or error text): consent at once as `signed_in`, or refuse as Entra ID would."""
        if query.get("client_id") != self.client_id or query.get("redirect_uri") not in self.redirect_uris:
            return 400, "AADSTS50011: the redirect URI or client is not registered"
        back = query["redirect_uri"]
        if (
            query.get("response_type") != "code"
            or query.get("code_challenge_method") != "S256"
            or not (43 <= len(query.get("code_challenge", "")) <= 128)
        ):
            return 302, f"{back}?{urlencode({'error': 'invalid_request', 'state': query.get('state', '')})}"
        code = secrets.token_urlsafe(24)
        self.codes[code] = {
            "client_id": self.client_id,
            "redirect_uri": back,
            "challenge": query["code_challenge"],
            "scope": query.get("scope", ""),
            "nonce": query.get("nonce", ""),
            "oid": self.signed_in,
        }
        return 302, f"{back}?{urlencode({'code': code, 'state': query.get('state', '')})}"

    def redeem(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """The token endpoint: a code is good once, with its client, redirect URI and PKCE verifier."""
        grant = self.codes.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "")
        proof = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if grant is None or form.get("grant_type") != "authorization_code":
            problem = "invalid_grant: unknown or used code"
        elif form.get("client_id") != grant["client_id"] or form.get("redirect_uri") != grant["redirect_uri"]:
            problem = "invalid_grant: client or redirect URI differs from the authorization request"
        elif proof != grant["challenge"]:
            problem = "invalid_grant: the code_verifier does not match the code_challenge"
        else:
            problem = ""
        if problem:
            self.refused.append(problem)
            return 400, {"error": "invalid_grant", "error_description": problem}
        self.redeemed.append({**grant, "requested": form.get("scope", "")})
        scopes = grant["scope"].split()
        if f"{AUDIENCE}/.default" not in scopes:  # only the scheduler's own audience is served
            return 400, {"error": "invalid_scope", "error_description": f"no token for {grant['scope']}"}
        upn = self.signed_in_upn or None
        now = int(time.time())
        identity = jwt.encode(
            {
                "aud": grant["client_id"],
                "iss": self.issuer,
                "iat": now,
                "nbf": now,
                "exp": now + 3600,
                "oid": grant["oid"],
                "tid": TENANT,
                "nonce": grant["nonce"],
                "preferred_username": upn or f"{grant['oid'][:8]}@contoso.example",
            },
            self.key,
            algorithm="RS256",
            headers={"kid": self.kid},
        )
        return 200, {
            "token_type": "Bearer",
            "scope": f"{AUDIENCE}/user_impersonation openid profile",
            "expires_in": self.token_lifetime,
            "ext_expires_in": self.token_lifetime,
            "access_token": self.token(grant["oid"], upn=upn, lifetime=self.token_lifetime),
            "id_token": identity,
        }

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "jwks_uri": f"{self.url}/{TENANT}/discovery/v2.0/keys",
            "authorization_endpoint": f"{self.url}/{TENANT}/oauth2/v2.0/authorize",
            "token_endpoint": f"{self.url}/{TENANT}/oauth2/v2.0/token",
            "end_session_endpoint": f"{self.url}/{TENANT}/oauth2/v2.0/logout",
            "id_token_signing_alg_values_supported": ["RS256"],
        }


@contextmanager
def local_issuer() -> Iterator[LocalIssuer]:
    issuer = LocalIssuer()

    class Handler(BaseHTTPRequestHandler):
        def _redirect(self, status: int, location: str) -> None:
            self.send_response(status)
            if status == 302:
                self.send_header("Location", location)
            body = b"" if status == 302 else location.encode()
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # http.server's naming
            issuer.requests.append(self.path)
            if not self.path.endswith("/oauth2/v2.0/token"):
                self.send_error(404)
                return
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            status, answer = issuer.redeem({k: v[0] for k, v in parse_qs(raw).items()})
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            # Entra ID answers a SPA's redemption with CORS headers for the origin of its redirect URI.
            if self.headers.get("Origin"):
                self.send_header("Access-Control-Allow-Origin", self.headers["Origin"])
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # http.server's naming
            issuer.requests.append(self.path)
            path, query = urlsplit(self.path).path, {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
            if path.endswith("/oauth2/v2.0/authorize"):
                self._redirect(*issuer.authorize(query))
                return
            if path.endswith("/oauth2/v2.0/logout"):
                back = query.get("post_logout_redirect_uri", "")
                self._redirect(*((302, back) if back in issuer.redirect_uris else (400, "unregistered logout URI")))
                return
            if self.path.endswith("/.well-known/openid-configuration"):
                body = issuer.metadata()
            elif self.path.endswith("/discovery/v2.0/keys"):
                body = issuer.jwks()
            else:
                self.send_error(404)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    issuer.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()


class MintedCredential:
    """An azure-core TokenCredential that answers with a token minted by the local issuer, only for the
    scheduler's own audience (`{audience}/.default`): a client asking for management.azure.com gets nothing."""

    def __init__(self, issuer: LocalIssuer, oid: str, **claims: Any) -> None:
        self.issuer, self.oid, self.claims = issuer, oid, claims
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        if scopes != (f"{AUDIENCE}/.default",):
            raise AssertionError(f"token requested for {scopes}, not for the scheduler's audience")
        return AccessToken(self.issuer.token(self.oid, **self.claims), int(time.time()) + 3000)


def new_id() -> str:
    return str(uuid.uuid4())
