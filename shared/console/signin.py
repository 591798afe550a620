"""What the console needs to sign a user in, from app settings; the browser does the signing in itself.

Contract: `SignIn.from_environment(env)` never raises. In `SCHEDULER_AUTH=entra` with
`SCHEDULER_CONSOLE_CLIENT_ID` set, `browser_config()` names the tenant's OAuth 2.0 endpoints
(`<authority>/oauth2/v2.0/authorize|token|logout`, the authority being the one the API's 401 challenge
names), the console's client id and the scope to request (`SCHEDULER_CONSOLE_SCOPE`, default the first
`SCHEDULER_AUTH_AUDIENCE` + `/.default`, the scheduler's own audience). The shell hands this to the page
(public values only: a SPA is a public client with no secret), and `connect_sources()` adds the authority's
origin to the page's Content-Security-Policy so the browser may redeem its code there and nowhere else.
In every other case the console keeps its credentials form (a pasted token or a Functions key): `entra`
without a client id, `key` and `none`; `problem` then says why sign-in is off when it should be on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..settings import AuthSettings, ConfigurationError

_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d{1,5})?$")


@dataclass(frozen=True)
class SignIn:
    mode: str  # SCHEDULER_AUTH: entra | key | none
    authority: str | None = None
    client_id: str | None = None
    scope: str | None = None
    problem: str | None = None

    @property
    def enabled(self) -> bool:
        return self.mode == "entra" and bool(self.authority and self.client_id and self.scope)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> SignIn:
        env = os.environ if env is None else env
        try:
            auth = AuthSettings.from_environment(env)
        except ConfigurationError as error:
            return cls(mode="entra", problem=str(error))
        if auth.mode != "entra":
            return cls(mode=auth.mode)
        client_id = (env.get("SCHEDULER_CONSOLE_CLIENT_ID") or "").strip() or None
        scope = (env.get("SCHEDULER_CONSOLE_SCOPE") or "").strip() or f"{auth.audiences[0].rstrip('/')}/.default"
        authority = auth.authorization_uri.rstrip("/")
        if not _ORIGIN.match(_origin(authority)):
            return cls(mode="entra", problem="The sign-in authority is not an http(s) address.")
        if client_id is None:
            return cls(
                mode="entra",
                authority=authority,
                scope=scope,
                problem="Sign-in is not configured (SCHEDULER_CONSOLE_CLIENT_ID): paste a token instead.",
            )
        return cls(mode="entra", authority=authority, client_id=client_id, scope=scope)

    def browser_config(self) -> dict[str, Any]:
        """What the page's script reads: the mode, and in `entra` the endpoints, client id and scope."""
        config: dict[str, Any] = {"mode": self.mode}
        if self.problem:
            config["problem"] = self.problem
        if self.enabled:
            config.update(
                {
                    "authority": self.authority,
                    "clientId": self.client_id,
                    "scope": self.scope,
                    "authorizeEndpoint": f"{self.authority}/oauth2/v2.0/authorize",
                    "tokenEndpoint": f"{self.authority}/oauth2/v2.0/token",
                    "logoutEndpoint": f"{self.authority}/oauth2/v2.0/logout",
                }
            )
        return config

    def connect_sources(self) -> tuple[str, ...]:
        """Origins the page may send requests to besides its own: the token endpoint's, when signing in."""
        return (_origin(self.authority),) if self.enabled and self.authority else ()


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
