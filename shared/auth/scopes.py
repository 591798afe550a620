"""Scopes and what an operation needs over one: ARM resource ids, and grants that cover the scopes below them.

Scopes are ARM resource ids: `/subscriptions/{s}`, `.../resourceGroups/{rg}`,
`.../providers/Microsoft.Scheduler/jobCollections/{jc}`; `/` (every subscription) holds the bootstrap Owner.
A grant at a scope covers every scope below it. Which scope and action an API operation needs is the API's
to compute from its route (shared/api/access.py); this package knows nothing of HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..keys import fold_case

ROOT = "/"


@dataclass(frozen=True)
class Requirement:
    action: str
    scope: str
    subscription: str


def covers(outer: str, inner: str) -> bool:
    """True when a grant at `outer` applies at `inner` (the same scope or one below it; ARM names fold case)."""
    if outer == ROOT:
        return True
    outer, inner = fold_case(outer.rstrip("/")), fold_case(inner.rstrip("/"))
    return inner == outer or inner.startswith(outer + "/")
