"""Secrets at rest: envelope encryption (AES-256-GCM from `cryptography`) of a job's write-only members.

A stored job's `Document` holds no secret. Its secrets (password, pfx, secret, sasToken, sasKey, at any
depth) are taken out, serialised with their paths, and sealed into the entity's `Sealed` property:

- a fresh random data key per write encrypts them (AES-GCM, 96-bit random nonce), with the entity's
  PartitionKey and RowKey as associated data, so a sealed value copied to another job does not open;
- the data key is wrapped (AES-GCM) under the current key-encryption key of the keyring; the record
  names that key by its id, so older keys keep opening what they sealed.

The keyring is the app setting `SCHEDULER_SECRET_KEYS`: one or more key materials (at least 32
characters of high-entropy text each, e.g. `python -m shared.store.rekey --new-key`), separated by `;`,
the first being the current one. Each material becomes a 256-bit key through HKDF-SHA256; its id is a
digest of the material, so no id needs writing down. In Azure the setting is a Key Vault reference
resolved with the app's managed identity (infra/modules/keyvault.bicep). Rotation (docs/secrets.md):
put the new material first and keep the old one, run `python -m shared.store.rekey` (it re-wraps every
job's data key under the new key), then drop the old material.

Without the setting, a deployment on the local development storage (Azurite) uses a fixed development
key, which keeps plaintext out of the tables but protects nothing; any other deployment refuses to store
or read a secret (SealError).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets as random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SETTING = "SCHEDULER_SECRET_KEYS"
# The write-only members of the wire models (HttpAuthentication, StorageQueueMessage, ServiceBusAuthentication).
SECRET_MEMBERS = frozenset({"password", "pfx", "secret", "sasToken", "sasKey"})
MIN_MATERIAL_CHARS = 32
_DEVELOPMENT_MATERIAL = "azure-scheduler development key: not a secret, for Azurite only"
_INFO = b"azure-scheduler secrets at rest v1"
_VERSION = 1


class SealError(Exception):
    """Secrets cannot be sealed or opened: no keyring, an unknown key id, or altered data. Never holds a secret."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class _Key:
    id: str
    aead: AESGCM


def _derive(material: str) -> _Key:
    raw = material.encode("utf-8")
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(raw)
    return _Key("k" + hashlib.sha256(raw).hexdigest()[:12], AESGCM(key))


class Keyring:
    """Key-encryption keys: the first seals, all of them open."""

    def __init__(self, materials: list[str]) -> None:
        if not materials:
            raise ValueError(f"{SETTING} holds no key")
        short = [m for m in materials if len(m) < MIN_MATERIAL_CHARS]
        if short:
            raise ValueError(f"every key in {SETTING} needs at least {MIN_MATERIAL_CHARS} characters")
        self.keys = [_derive(m) for m in materials]
        self.current = self.keys[0]
        self._by_id = {k.id: k for k in self.keys}
        self._materials = tuple(materials)

    def derived(self, purpose: bytes) -> list[AESGCM]:
        """AES-256-GCM keys for another use of the same materials (HKDF-SHA256 with `purpose` as its info), the
        current one first: independent of the keys that seal secrets, so neither use can serve the other."""
        return [
            AESGCM(HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(m.encode("utf-8")))
            for m in self._materials
        ]

    @classmethod
    def parse(cls, text: str) -> Keyring:
        return cls([part.strip() for part in text.replace("\n", ";").split(";") if part.strip()])

    @classmethod
    def development(cls) -> Keyring:
        return cls([_DEVELOPMENT_MATERIAL])

    def key(self, key_id: str) -> _Key:
        found = self._by_id.get(key_id)
        if found is None:
            raise SealError(f"the secrets were sealed with key '{key_id}', which {SETTING} no longer holds")
        return found


def new_key_material() -> str:
    """A fresh key material for SCHEDULER_SECRET_KEYS (256 random bits, URL-safe Base64)."""
    return base64.urlsafe_b64encode(os.urandom(32)).decode("ascii").rstrip("=")


# --- taking secrets out of a document and putting them back ---------------------------------------------

Path = list[Any]  # keys and list indexes from the document's root


def _walk(node: Any, path: Path) -> Iterator[tuple[Path, dict[str, Any], str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in SECRET_MEMBERS and isinstance(value, str):
                yield path + [key], node, key
            else:
                yield from _walk(value, path + [key])
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _walk(item, path + [index])


def extract(document: dict[str, Any]) -> list[tuple[Path, str]]:
    """Remove every secret member from `document` (in place) and return them with their paths."""
    found = list(_walk(document, []))
    taken = [(path, holder[key]) for path, holder, key in found]
    for _, holder, key in found:
        del holder[key]
    return taken


def restore(document: dict[str, Any], taken: list[tuple[Path, str]]) -> None:
    """Put secrets back where they were; a path whose holder no longer exists is skipped."""
    for path, value in taken:
        node: Any = document
        for step in path[:-1]:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                node = None
                break
        if isinstance(node, dict):
            node[path[-1]] = value


# --- sealing --------------------------------------------------------------------------------------------


def seal(keyring: Keyring, taken: list[tuple[Path, str]], bound_to: str) -> str:
    """The `Sealed` property for these secrets, bound to one entity (`bound_to`: its partition and row key)."""
    data_key = AESGCM.generate_key(bit_length=256)
    wrap_nonce, nonce = random.token_bytes(12), random.token_bytes(12)
    wrapped = keyring.current.aead.encrypt(wrap_nonce, data_key, _wrap_aad(keyring.current.id))
    plaintext = json.dumps([[path, value] for path, value in taken], separators=(",", ":")).encode("utf-8")
    ciphertext = AESGCM(data_key).encrypt(nonce, plaintext, bound_to.encode("utf-8"))
    return json.dumps(
        {"v": _VERSION, "kid": keyring.current.id, "dek": _b64(wrap_nonce + wrapped), "ct": _b64(nonce + ciphertext)},
        separators=(",", ":"),
    )


def open_sealed(keyring: Keyring, sealed: str, bound_to: str) -> list[tuple[Path, str]]:
    """The secrets sealed for the entity `bound_to`; SealError for an unknown key or data altered or moved."""
    try:
        envelope = json.loads(sealed)
        if envelope.get("v") != _VERSION:
            raise SealError("the sealed secrets have an unknown format")
        key = keyring.key(str(envelope["kid"]))
        wrapped = base64.b64decode(envelope["dek"])
        data_key = key.aead.decrypt(wrapped[:12], wrapped[12:], _wrap_aad(key.id))
        body = base64.b64decode(envelope["ct"])
        plaintext = AESGCM(data_key).decrypt(body[:12], body[12:], bound_to.encode("utf-8"))
        return [(list(path), str(value)) for path, value in json.loads(plaintext)]
    except SealError:
        raise
    except (InvalidTag, ValueError, KeyError, TypeError) as exc:
        raise SealError("the sealed secrets do not open: altered, or sealed for another entity") from exc


def rewrap(keyring: Keyring, sealed: str) -> str | None:
    """The same sealed secrets with the data key wrapped under the current key; None when already so."""
    try:
        envelope = json.loads(sealed)
        if envelope.get("kid") == keyring.current.id:
            return None
        key = keyring.key(str(envelope["kid"]))
        wrapped = base64.b64decode(envelope["dek"])
        data_key = key.aead.decrypt(wrapped[:12], wrapped[12:], _wrap_aad(key.id))
    except SealError:
        raise
    except (InvalidTag, ValueError, KeyError, TypeError) as exc:
        raise SealError("the sealed data key does not open") from exc
    wrap_nonce = random.token_bytes(12)
    rewrapped = keyring.current.aead.encrypt(wrap_nonce, data_key, _wrap_aad(keyring.current.id))
    return json.dumps(
        {**envelope, "kid": keyring.current.id, "dek": _b64(wrap_nonce + rewrapped)}, separators=(",", ":")
    )


def _wrap_aad(key_id: str) -> bytes:
    return f"azure-scheduler data key|{key_id}".encode()
