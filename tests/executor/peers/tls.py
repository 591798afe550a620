"""A throw-away PKI made with `cryptography`: a test CA, a server certificate for 127.0.0.1, client PFXs."""

from __future__ import annotations

import base64
import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Issued:
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    def pem_files(self, folder: Path, name: str) -> tuple[Path, Path]:
        cert, key = folder / f"{name}.crt", folder / f"{name}.key"
        cert.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))
        key.write_bytes(
            self.key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        return cert, key

    def pfx(self, password: str, chain: list[x509.Certificate] | None = None) -> str:
        """Base64 PKCS#12, as a job's ClientCertificate authentication carries it."""
        encryption = (
            serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
        )
        data = pkcs12.serialize_key_and_certificates(b"client", self.key, self.certificate, chain, encryption)
        return base64.b64encode(data).decode()


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


class TestCA:
    __test__ = False  # not a pytest class

    def __init__(self, common_name: str = "Scheduler Test CA") -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(_name(common_name))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(hours=1))
            .not_valid_after(now + timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self.key, hashes.SHA256())
        )

    def pem_file(self, folder: Path) -> Path:
        path = folder / "ca.crt"
        path.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))
        return path

    def issue(self, common_name: str, server: bool, dns_names: tuple[str, ...] = ()) -> Issued:
        """A certificate for `common_name`; a server one names 127.0.0.1, or only `dns_names` when given."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(hours=1))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if server:
            names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names] or [
                x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
            ]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        return Issued(key, builder.sign(self.key, hashes.SHA256()))
