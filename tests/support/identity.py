"""A local Entra ID stand-in for tests: a signing key, its OIDC metadata and JWKS served over loopback HTTP,
and tokens minted with it. The scheduler validates these exactly as it validates Entra ID's (nothing of the
validator is patched): it fetches the metadata, then the keys, and checks signature, issuer, audience and
lifetime.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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

    @property
    def metadata_url(self) -> str:
        return f"{self.url}/{TENANT}/v2.0/.well-known/openid-configuration"

    @property
    def issuer(self) -> str:
        return f"{self.url}/{TENANT}/v2.0"

    def settings(self, *owners: str) -> AuthSettings:
        return AuthSettings(mode="entra", tenant_id=TENANT, audiences=(AUDIENCE,), metadata_url=self.metadata_url,
                            owners=tuple(o.lower() for o in owners))

    def environment(self, *owners: str) -> dict[str, str]:
        """The same settings as app settings (for the real function_app.py under the local host)."""
        return {"SCHEDULER_AUTH": "entra", "SCHEDULER_AUTH_TENANT_ID": TENANT, "SCHEDULER_AUTH_AUDIENCE": AUDIENCE,
                "SCHEDULER_AUTH_METADATA_URL": self.metadata_url, "SCHEDULER_AUTH_OWNER": ",".join(owners)}

    def token(self, oid: str, *, audience: str = AUDIENCE, groups: list[str] | None = None, lifetime: int = 3600,
              issuer: str | None = None, key: rsa.RSAPrivateKey | None = None, kid: str | None = None,
              upn: str | None = None, **claims: Any) -> str:
        now = int(time.time())
        payload: dict[str, Any] = {
            "aud": audience, "iss": issuer or self.issuer, "iat": now - 5, "nbf": now - 5, "exp": now + lifetime,
            "oid": oid, "tid": TENANT, "sub": oid, "ver": "2.0", "scp": "user_impersonation",
            "preferred_username": upn or f"{oid[:8]}@contoso.example", **claims,
        }
        if groups is not None:
            payload["groups"] = groups
        return jwt.encode(payload, key or self.key, algorithm="RS256", headers={"kid": kid or self.kid})

    def jwks(self) -> dict[str, Any]:
        public = RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def metadata(self) -> dict[str, Any]:
        return {"issuer": self.issuer, "jwks_uri": f"{self.url}/{TENANT}/discovery/v2.0/keys",
                "authorization_endpoint": f"{self.url}/{TENANT}/oauth2/v2.0/authorize",
                "token_endpoint": f"{self.url}/{TENANT}/oauth2/v2.0/token",
                "id_token_signing_alg_values_supported": ["RS256"]}


@contextmanager
def local_issuer() -> Iterator[LocalIssuer]:
    issuer = LocalIssuer()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            issuer.requests.append(self.path)
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
