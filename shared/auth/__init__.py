"""Authentication and authorization at the API boundary (issue: identity like ARM).

`admit` is called by the API (shared/api/access.py computes each operation's `Requirement` from its route)
before every operation but the anonymous ones; nothing in the domain code knows about callers, and nothing
here knows HTTP. See gate.py for the contract, tokens.py for token validation (PyJWT), roles.py and
scopes.py for actions and scopes, and docs/identity.md for the settings.
"""

from __future__ import annotations

from .gate import UNRESTRICTED, Access, admit, authenticates
from .principal import Principal
from .scopes import Requirement

__all__ = ["UNRESTRICTED", "Access", "Principal", "Requirement", "admit", "authenticates"]
