"""Continuation tokens: the `$skiptoken` of a nextLink, opaque and tamper-proof, bound to the list it continues.

Contract:
- `seal(settings, now, binding, position)` turns a position (where the next page starts: the row key of the
  last item a page returned, a store continuation, ...; any JSON value) into URL-safe text; `unseal(settings,
  now, binding, text)` gives it back, or raises a 400 ApiError naming `$skiptoken`. Never a silent restart.
- A token is AES-256-GCM (`cryptography`) under a key derived with HKDF from the key materials of
  `SCHEDULER_SECRET_KEYS` (the keyring of secrets at rest, shared/store/sealing.py; the development key on
  Azurite), with its own HKDF info, so a token key never opens a secret nor the reverse. The current material
  seals; every material of the keyring opens, so a key rotation keeps the walks under way.
- The plaintext (the position and the instant it was issued) is encrypted and padded to a multiple of
  `_BLOCK` bytes: a token says nothing of the names in it, not even their length.
- The associated data is the `binding`: which list, its route (subscription, group, collection, job, scope,
  case-folded), its filter, and the caller's access (object id, and the scopes a filtered list is cut down
  to). A token altered in any byte, issued for another list, filter or caller (or before the caller's access
  changed), sealed under a key no longer in the keyring, or older than `LIFETIME`, does not open.
Without a keyring (a deployment off Azurite without SCHEDULER_SECRET_KEYS) no token can be issued or read:
the list answers 500 and the log names the setting (docs/secrets.md).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import ApiError, bad_request
from ..keys import fold_case
from ..settings import ConfigurationError, Settings
from ..store import keyring_of

log = logging.getLogger(__name__)

# A walk through pages takes seconds; an hour leaves room for a person paging by hand.
LIFETIME = timedelta(hours=1)
_FUTURE_SKEW = timedelta(minutes=5)  # instances' clocks differ a little
_VERSION = b"\x01"
_PURPOSE = b"azure-scheduler continuation tokens v1"
_NONCE = 12
_TAG = 16
_BLOCK = 64
_MAX_TEXT = 4096  # far above any token issued; longer text is refused before decoding


def binding(
    kind: str, route: Mapping[str, str], query: str, caller: str | None, readable: Sequence[str] | None
) -> bytes:
    """What a token is bound to (its AEAD associated data): the list, its route, filter and the caller's access."""
    values = sorted((name.lower(), fold_case(value)) for name, value in route.items())
    scopes = None if readable is None else sorted(fold_case(s) for s in readable)
    return json.dumps([kind, values, query, caller, scopes], separators=(",", ":")).encode("utf-8")


@lru_cache(maxsize=16)
def _keys(settings: Settings) -> tuple[AESGCM, ...]:
    try:
        keyring = keyring_of(settings)
    except ConfigurationError:
        keyring = None
    return () if keyring is None else tuple(keyring.derived(_PURPOSE))


def _require_keys(settings: Settings) -> tuple[AESGCM, ...]:
    keys = _keys(settings)
    if not keys:
        log.error(
            "continuation tokens need SCHEDULER_SECRET_KEYS (a valid keyring): a list with a next page "
            "cannot be answered"
        )
        raise ApiError(
            500,
            "InternalError",
            "The service cannot page this list: its key setting is missing. Please tell the service's operator.",
        )
    return keys


def _aad(bound: bytes) -> bytes:
    return b"azure-scheduler $skiptoken|" + _VERSION + b"|" + bound


def seal(settings: Settings, now: datetime, bound: bytes, position: Any) -> str:
    key = _require_keys(settings)[0]
    plain = json.dumps({"p": position, "t": int(now.timestamp())}, separators=(",", ":")).encode("utf-8")
    plain += b" " * (-len(plain) % _BLOCK)  # JSON ignores trailing blanks
    nonce = os.urandom(_NONCE)
    sealed = _VERSION + nonce + key.encrypt(nonce, plain, _aad(bound))
    return base64.urlsafe_b64encode(sealed).decode("ascii").rstrip("=")


def _refused(reason: str) -> ApiError:
    return bad_request(f"The continuation token {reason}; list again from the start, without $skiptoken.", "$skiptoken")


def unseal(settings: Settings, now: datetime, bound: bytes, text: str) -> Any:
    """The position sealed in `text` for this binding; 400 for anything else."""
    invalid = _refused(
        "is not valid for this request (altered, issued for another list, filter or caller, "
        "or issued before the caller's access changed)"
    )
    if len(text) > _MAX_TEXT:
        raise invalid
    try:
        raw = base64.urlsafe_b64decode(text.strip().encode("ascii") + b"==")
    except (ValueError, UnicodeError, binascii.Error) as exc:
        raise invalid from exc
    if len(raw) < 1 + _NONCE + _TAG or raw[:1] != _VERSION:
        raise invalid
    nonce, sealed = raw[1 : 1 + _NONCE], raw[1 + _NONCE :]
    for key in _require_keys(settings):
        try:
            plain = key.decrypt(nonce, sealed, _aad(bound))
            break
        except InvalidTag:
            continue
    else:
        raise invalid
    try:
        content = json.loads(plain)
        issued = int(content["t"])
        position = content["p"]
    except (ValueError, KeyError, TypeError) as exc:  # authentic, so only a format of another version
        raise invalid from exc
    age = now.timestamp() - issued
    if age > LIFETIME.total_seconds():
        raise _refused(f"has expired (tokens last {int(LIFETIME.total_seconds() // 60)} minutes)")
    if age < -_FUTURE_SKEW.total_seconds():
        raise invalid
    return position
