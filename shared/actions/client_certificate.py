"""ClientCertificate authentication: a base64 PFX and its password, turned into a TLS context.

Python's `ssl` loads a certificate chain only from a file. The private key therefore never touches
the disk in the clear: it is written PKCS#8-encrypted under a random one-time password to a private
(0600) temporary file, loaded, and the file removed at once; the one-time password lives only in
this process. Contexts are cached by a digest of (pfx, password), so each certificate is decoded
once per worker (each attempt still opens its own connection).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import secrets
import ssl
import tempfile
import threading
from collections import OrderedDict

from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, Encoding, PrivateFormat, pkcs12

MAX_CACHED = 64


class CertificateError(Exception):
    """The PFX cannot be used; the message is safe for history (no secret)."""


def cache_key(pfx: str, password: str) -> str:
    return hashlib.sha256(f"{pfx}\0{password}".encode()).hexdigest()


def client_context(pfx: str, password: str, cafile: str) -> ssl.SSLContext:
    """A client TLS context trusting `cafile` and presenting the PFX's certificate and chain."""
    try:
        data = base64.b64decode(pfx, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CertificateError("the pfx is not valid base64") from exc
    try:
        key, certificate, chain = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError as exc:
        raise CertificateError("the pfx could not be opened with the given password") from exc
    if key is None or certificate is None:
        raise CertificateError("the pfx holds no private key and certificate")
    one_time = secrets.token_bytes(32)
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(one_time))
    pem += certificate.public_bytes(Encoding.PEM)
    for extra in chain or ():
        pem += extra.public_bytes(Encoding.PEM)
    context = ssl.create_default_context(cafile=cafile)
    descriptor, path = tempfile.mkstemp(prefix="scheduler-cert-", suffix=".pem")  # mode 0600
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(pem)
        context.load_cert_chain(path, password=one_time)
    except ssl.SSLError as exc:
        raise CertificateError("the pfx's key and certificate do not form a usable pair") from exc
    finally:
        os.unlink(path)
    return context


class ContextCache:
    """A bounded, thread-safe cache of client contexts (least recently used is dropped first)."""

    def __init__(self, cafile: str, size: int = MAX_CACHED) -> None:
        self.cafile = cafile
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[str, ssl.SSLContext] = OrderedDict()

    def get(self, pfx: str, password: str) -> tuple[str, ssl.SSLContext]:
        key = cache_key(pfx, password)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return key, self._items[key]
        context = client_context(pfx, password, self.cafile)  # outside the lock: decoding is slow
        with self._lock:
            self._items[key] = context
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return key, context
