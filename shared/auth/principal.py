"""The authenticated caller: who the token says it is, reduced to what authorization needs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Principal:
    """An Entra ID principal. `object_id` and `groups` are lower-case GUIDs; `client` names it in messages."""

    object_id: str
    client: str
    groups: tuple[str, ...] = ()

    @property
    def ids(self) -> frozenset[str]:
        """Every principal id a role assignment may name for this caller: itself and its groups."""
        return frozenset((self.object_id, *self.groups))

    @classmethod
    def from_claims(cls, claims: Mapping[str, Any]) -> Principal | None:
        """From validated claims; None without an `oid` (a token that names no principal cannot be authorized).

        The client is named as ARM names it: the user's sign-in name, else the application id. Group ids come
        from the `groups` claim; a token whose groups overflowed (`_claim_names`) carries none, so group
        assignments do not apply to it (resolving the overage needs Microsoft Graph, which we do not call).
        """
        oid = claims.get("oid")
        if not isinstance(oid, str) or not oid.strip():
            return None
        client = next(
            (
                str(claims[name])
                for name in ("upn", "unique_name", "preferred_username", "appid", "azp")
                if isinstance(claims.get(name), str) and claims[name]
            ),
            oid,
        )
        raw_groups = claims.get("groups")
        listed = raw_groups if isinstance(raw_groups, list) else []
        groups = tuple(g.strip().lower() for g in listed if isinstance(g, str))
        return cls(object_id=oid.strip().lower(), client=client, groups=groups)
