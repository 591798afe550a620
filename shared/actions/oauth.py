"""ActiveDirectoryOAuth authentication: a client-credentials token for `audience`, cached until expiry.

A plain POST to the v1 endpoint `{authority}/{tenant}/oauth2/token` (grant_type client_credentials,
resource = audience), which is what the old service used. msal and azure-identity validate the
authority against Azure AD's instance discovery, which refuses the local token endpoint an
operator (or a test) configures through SCHEDULER_AAD_AUTHORITY_HOST; a direct POST has no such
limit. Tokens are cached per (authority, tenant, client, secret digest, audience) and renewed a
few minutes before they expire.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from urllib.parse import quote

import requests

TOKEN_TIMEOUT_SECONDS = 30
# Renew this long before expiry, so a token never expires between the cache hit and the request.
RENEW_BEFORE_SECONDS = 300


class TokenError(Exception):
    """No token could be obtained; the message is safe for history (no secret, no token)."""


@dataclass(frozen=True)
class _Cached:
    token: str
    renew_at: float  # time.monotonic() seconds


class TokenCache:
    def __init__(self, authority: str, timeout: float = TOKEN_TIMEOUT_SECONDS) -> None:
        self.authority = authority.rstrip("/")
        self.timeout = timeout
        self._lock = threading.Lock()
        self._tokens: dict[tuple[str, ...], _Cached] = {}
        self._session = requests.Session()
        self._session.trust_env = False

    def token(self, tenant: str, client_id: str, secret: str, audience: str) -> str:
        """A bearer token for `audience`; raises TokenError when the authority refuses or is unreachable."""
        key = (tenant.lower(), client_id, hashlib.sha256(secret.encode()).hexdigest(), audience)
        now = time.monotonic()
        with self._lock:
            cached = self._tokens.get(key)
            if cached is not None and cached.renew_at > now:
                return cached.token
        token, lifetime = self._request(tenant, client_id, secret, audience)
        with self._lock:
            self._tokens[key] = _Cached(token, now + max(lifetime - RENEW_BEFORE_SECONDS, lifetime / 2))
            self._drop_expired(now)
        return token

    def _request(self, tenant: str, client_id: str, secret: str, audience: str) -> tuple[str, float]:
        url = f"{self.authority}/{quote(tenant, safe='')}/oauth2/token"
        form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret,
                "resource": audience}
        try:
            response = self._session.post(url, data=form, timeout=self.timeout, allow_redirects=False)
        except requests.RequestException as exc:
            raise TokenError(f"the token endpoint could not be reached ({type(exc).__name__})") from exc
        try:
            payload = response.json()
        except ValueError:
            payload = {}
        if response.status_code != 200 or not isinstance(payload, dict) or "access_token" not in payload:
            # `error` is a code such as invalid_client; the description may echo request details, so it stays out.
            code = payload.get("error") if isinstance(payload, dict) else None
            raise TokenError(f"the token endpoint answered {response.status_code}" + (f" ({code})" if code else ""))
        try:
            lifetime = float(payload.get("expires_in", 3600))
        except (TypeError, ValueError):
            lifetime = 3600.0
        return str(payload["access_token"]), lifetime

    def _drop_expired(self, now: float) -> None:
        for key in [k for k, v in self._tokens.items() if v.renew_at <= now]:
            del self._tokens[key]
