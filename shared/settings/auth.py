"""Who may call the API (shared/auth/): `SCHEDULER_AUTH` and the settings of its `entra` mode, and whether the
Functions host checks its own keys on the API routes.

Unset, `SCHEDULER_AUTH` means `key` (what a deployment without the setting had): never open by omission. A mode
the app does not know raises ConfigurationError, and keeps the host's keys on meanwhile (`host_checks_keys`
fails closed).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from .reading import ConfigurationError

AUTH_MODES = ("entra", "key", "none")
ENTRA_AUTHORITY = "https://login.microsoftonline.com"


def _list(value: str | None, lower: bool = False) -> tuple[str, ...]:
    items = (item.strip() for item in (value or "").split(","))
    return tuple(item.lower() if lower else item for item in items if item)


def host_checks_keys(env: Mapping[str, str] | None = None) -> bool:
    """Whether the Functions host must check its keys on the API routes: not in `entra` mode (the app checks
    tokens) nor in `none`. Any other value keeps the keys on (fail closed; the app then refuses the setting)."""
    env = os.environ if env is None else env
    return (env.get("SCHEDULER_AUTH") or "key").strip().lower() not in {"entra", "none"}


@dataclass(frozen=True)
class AuthSettings:
    """Who may call the API (shared/auth/): `SCHEDULER_AUTH` and the settings of its `entra` mode.

    `entra`: every request carries an Entra ID bearer token for `audiences` (the app's application id URI),
    signed with a key of the tenant's OIDC metadata at `metadata_url`, issued by one of `issuers`; roles
    come from role assignments, plus Owner over everything for the `owners` object ids.
    `key`: the Functions host checks its keys; the app trusts every request that reaches it.
    `none`: anonymous (local development).
    """

    mode: str = "none"
    tenant_id: str | None = None
    audiences: tuple[str, ...] = ()
    metadata_url: str | None = None
    issuers: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    clock_skew_seconds: int = 60

    @property
    def authorization_uri(self) -> str:
        """Where a client gets its token (sent in WWW-Authenticate, as ARM does)."""
        origin = "/".join((self.metadata_url or ENTRA_AUTHORITY).split("/", 3)[:3])
        return f"{origin}/{self.tenant_id}" if self.tenant_id else origin

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> AuthSettings:
        # Unset means `key`: what a deployment without the setting had (the host's Functions keys), never open.
        mode = (env.get("SCHEDULER_AUTH") or "key").strip().lower()
        if mode not in AUTH_MODES:
            raise ConfigurationError(f"SCHEDULER_AUTH must be one of {', '.join(AUTH_MODES)}")
        tenant = (env.get("SCHEDULER_AUTH_TENANT_ID") or "").strip() or None
        metadata = (env.get("SCHEDULER_AUTH_METADATA_URL") or "").strip() or (
            tenant and f"{ENTRA_AUTHORITY}/{tenant}/v2.0/.well-known/openid-configuration"
        )
        settings = cls(
            mode=mode,
            tenant_id=tenant,
            audiences=_list(env.get("SCHEDULER_AUTH_AUDIENCE")),
            metadata_url=metadata or None,
            issuers=_list(env.get("SCHEDULER_AUTH_ISSUERS")),
            owners=_list(env.get("SCHEDULER_AUTH_OWNER"), lower=True),
        )
        if mode == "entra" and not (settings.audiences and settings.metadata_url and (tenant or settings.issuers)):
            raise ConfigurationError(
                "SCHEDULER_AUTH=entra needs SCHEDULER_AUTH_AUDIENCE and SCHEDULER_AUTH_TENANT_ID "
                "(or SCHEDULER_AUTH_METADATA_URL and SCHEDULER_AUTH_ISSUERS)"
            )
        return settings
