"""Authentication and authorization at the API boundary (issue: identity like ARM).

`admit` is called by `shared.api.handle` before every operation but the anonymous ones; nothing in the
domain code knows about callers. See gate.py for the contract, tokens.py for token validation (PyJWT),
roles.py and scopes.py for what each operation needs, and docs/identity.md for the settings.
"""

from __future__ import annotations

from .gate import UNRESTRICTED, Access, admit
from .principal import Principal

__all__ = ["UNRESTRICTED", "Access", "Principal", "admit"]
