"""A local managed-identity endpoint: what App Service serves at IDENTITY_ENDPOINT, with a signing key of its own, so
a ManagedIdentity Http action (shared/actions/managed_identity.py) gets a token on this machine too.

Contract:
- `LocalIdentity().start()` serves on 127.0.0.1 (a free port) until `stop()`:
  - `GET /msi/token?api-version=2019-08-01&resource=R[&client_id=C]` with `X-IDENTITY-HEADER: <header>` answers
    200 `{"access_token", "expires_on", "resource", "token_type": "Bearer", "client_id"}` (App Service's answer;
    `expires_on` in seconds since the epoch, as a string). The token is an RS256 JWT: `aud` R, `iss` this
    endpoint's issuer, `sub` and `oid` the identity's object id, `appid`/`azp` C (else the system identity's
    client id), `iat`/`nbf` now, `exp` `lifetime` seconds on. A missing or wrong header is 401, another
    api-version or no resource 400 (App Service's answers, without its wording).
  - `GET /.well-known/openid-configuration` and `GET /discovery/keys` publish the issuer and the public key, so a
    local target validates these tokens as it would Entra ID's.
- `environment()`: the IDENTITY_ENDPOINT and IDENTITY_HEADER the app's process reads; the header is 256 random
  bits per start, never printed. devhost/cli.py starts one when the environment names no endpoint.
- `requests` counts the token requests answered (a test or a curious developer may look).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

TOKEN_PATH = "/msi/token"
API_VERSION = "2019-08-01"
SYSTEM_CLIENT_ID = "00000000-0000-4000-8000-0000000000ad"  # the local system-assigned identity's client id


@dataclass
class LocalIdentity:
    lifetime: int = 3600
    key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    kid: str = "devhost-identity-1"
    header: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    url: str = ""
    requests: int = 0
    _server: ThreadingHTTPServer | None = None
    _count: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def issuer(self) -> str:
        return f"{self.url}/"

    @property
    def endpoint(self) -> str:
        return f"{self.url}{TOKEN_PATH}"

    def environment(self) -> dict[str, str]:
        return {"IDENTITY_ENDPOINT": self.endpoint, "IDENTITY_HEADER": self.header}

    def jwks(self) -> dict[str, Any]:
        public = RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def mint(self, resource: str, client_id: str | None) -> dict[str, str]:
        """App Service's answer for `resource`: one object id per client id, so each identity is told apart."""
        now = int(time.time())
        client = client_id or SYSTEM_CLIENT_ID
        oid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.url}/{client}"))
        claims = {"aud": resource, "iss": self.issuer, "sub": oid, "oid": oid, "appid": client, "azp": client}
        token = jwt.encode(
            {**claims, "iat": now, "nbf": now, "exp": now + self.lifetime},
            self.key,
            algorithm="RS256",
            headers={"kid": self.kid},
        )
        expires_on = str(now + self.lifetime)
        return {
            "access_token": token,
            "expires_on": expires_on,
            "resource": resource,
            "token_type": "Bearer",
            "client_id": client,
        }

    def answer(self, path: str, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        parts = urlsplit(path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/.well-known/openid-configuration":
            return 200, {"issuer": self.issuer, "jwks_uri": f"{self.url}/discovery/keys"}
        if parts.path == "/discovery/keys":
            return 200, self.jwks()
        if parts.path != TOKEN_PATH:
            return 404, {"error": "not_found"}
        if not secrets.compare_digest(headers.get("x-identity-header", ""), self.header):
            return 401, {"error": "unauthorized", "error_description": "X-IDENTITY-HEADER is missing or wrong"}
        if query.get("api-version") != API_VERSION or not query.get("resource"):
            return 400, {"error": "invalid_request", "error_description": f"api-version {API_VERSION} and resource"}
        with self._count:
            self.requests += 1
        return 200, self.mint(query["resource"], query.get("client_id"))

    def start(self) -> LocalIdentity:
        identity = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # http.server's naming
                status, body = identity.answer(self.path, {k.lower(): v for k, v in self.headers.items()})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:  # the query names audiences; nothing else to say
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, name="devhost-identity", daemon=True).start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
