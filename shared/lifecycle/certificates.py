"""ClientCertificate authentication: what the service reported about the uploaded PFX.

The response carries `certificateThumbprint`, `certificateSubjectName` and the expiration, never the
PFX or its password (docs/decisions.md, Q1/Q5), so they are read from the PFX once, at write time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from datetime import datetime

from cryptography.hazmat.primitives.serialization import Encoding, pkcs12

from .errors import InvalidDefinition


@dataclass(frozen=True)
class CertificateFacts:
    thumbprint: str
    subject: str
    expiration: datetime


def describe_pfx(pfx: str, password: str | None, path: str) -> CertificateFacts:
    """Open a base64 PKCS#12 with its password; InvalidDefinition naming `path` when that fails or finds none."""
    try:
        data = base64.b64decode(pfx, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidDefinition("pfx must be a base64-encoded PKCS#12 (PFX) file.", f"{path}.pfx") from exc
    try:
        _, certificate, _ = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except (ValueError, TypeError) as exc:
        raise InvalidDefinition("The PFX cannot be opened with this password.", f"{path}.password") from exc
    if certificate is None:
        raise InvalidDefinition("The PFX holds no certificate.", f"{path}.pfx")
    return CertificateFacts(
        # A thumbprint is SHA-1 by definition.
        thumbprint=hashlib.sha1(certificate.public_bytes(Encoding.DER)).hexdigest().upper(),
        subject=certificate.subject.rfc4514_string(),
        expiration=certificate.not_valid_after_utc,
    )
