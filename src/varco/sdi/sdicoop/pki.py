"""A throw-away PKI for mutual TLS between varco and a simulated SDI (tests, demos; never production).

Files written by `make_test_pki(directory)` (PEM; keys 0600, certificates 0644):

| file | what |
|---|---|
| `ca.crt.pem`, `ca.key.pem` | the test CA: trust anchor of both sides (the SDI's "CA bundle") |
| `sdi-server.crt.pem`, `sdi-server.key.pem` | the simulated SDI's HTTPS endpoints (SdIRiceviFile, ...) |
| `sdi-client.crt.pem`, `sdi-client.key.pem` | the simulated SDI calling intermediaries |
| `<name>-server.crt.pem`, `<name>-server.key.pem` | intermediary `name`'s endpoints, called by the SDI |
| `<name>-client.crt.pem`, `<name>-client.key.pem` | intermediary `name` calling the SDI |
| `other-ca.crt.pem`, `other-ca.key.pem` | an unrelated CA |
| `other-client.crt.pem`, `other-client.key.pem` | a client certificate of the unrelated CA: must be refused |

Server certificates carry SAN `localhost`, `127.0.0.1` and `::1`. Validity is fixed (2020 to 9999, the
RFC 5280 "no expiry" date), so nothing here reads the clock.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,40}")
NOT_BEFORE = datetime(2020, 1, 1, tzinfo=UTC)
NOT_AFTER = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
_SERVER_NAMES: list[x509.GeneralName] = [
    x509.DNSName("localhost"),
    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    x509.IPAddress(ipaddress.ip_address("::1")),
]


@dataclass(frozen=True)
class KeyPair:
    cert: Path
    key: Path


@dataclass(frozen=True)
class TestPki:
    __test__ = False  # not a pytest class

    ca: KeyPair
    sdi_server: KeyPair
    sdi_client: KeyPair
    intermediaries_server: dict[str, KeyPair]
    intermediaries_client: dict[str, KeyPair]
    other_ca: KeyPair
    other_client: KeyPair


@dataclass(frozen=True)
class _Issuer:
    name: x509.Name
    key: ec.EllipticCurvePrivateKey


def _write(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.chmod(path, mode)  # an existing file keeps its old mode through os.open


def _save(directory: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> KeyPair:
    pair = KeyPair(directory / f"{stem}.crt.pem", directory / f"{stem}.key.pem")
    _write(pair.cert, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    _write(pair.key, key_pem, 0o600)
    return pair


def _certificate(
    subject: str, key: ec.EllipticCurvePrivateKey, issuer: _Issuer | None, *, usage: str
) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    public = key.public_key()
    signer = issuer or _Issuer(name, key)  # None: self-signed CA
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(signer.name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOT_BEFORE)
        .not_valid_after(NOT_AFTER)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.key.public_key()), critical=False
        )
    )
    # Extensions as strict verifiers (Python 3.13's VERIFY_X509_STRICT) want them.
    if usage == "ca":
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        builder = builder.add_extension(_key_usage(cert_sign=True), critical=True)
    else:
        eku = ExtendedKeyUsageOID.SERVER_AUTH if usage == "server" else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        builder = builder.add_extension(_key_usage(cert_sign=False), critical=True)
        builder = builder.add_extension(x509.ExtendedKeyUsage([eku]), critical=False)
        if usage == "server":
            builder = builder.add_extension(x509.SubjectAlternativeName(_SERVER_NAMES), critical=False)
        else:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
            )
    return builder.sign(signer.key, hashes.SHA256())


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=not cert_sign,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _issue(directory: Path, stem: str, subject: str, issuer: _Issuer | None, usage: str) -> KeyPair:
    key = ec.generate_private_key(ec.SECP256R1())
    return _save(directory, stem, _certificate(subject, key, issuer, usage=usage), key)


def _ca(directory: Path, stem: str, subject: str) -> tuple[KeyPair, _Issuer]:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _certificate(subject, key, None, usage="ca")
    return _save(directory, stem, cert, key), _Issuer(cert.subject, key)


def make_test_pki(directory: Path | str, intermediaries: Sequence[str] = ("varco",)) -> TestPki:
    """Write a fresh test CA, the SDI's and each intermediary's certificates, and an unrelated CA."""
    for name in intermediaries:
        if not _NAME.fullmatch(name) or name in ("sdi", "other"):
            raise ValueError(f"intermediary name {name!r}: lower-case letters, digits and '-' only")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ca, issuer = _ca(directory, "ca", "varco test SDICoop CA")
    other_ca, other_issuer = _ca(directory, "other-ca", "unrelated test CA")
    return TestPki(
        ca=ca,
        sdi_server=_issue(directory, "sdi-server", "sdi.test", issuer, "server"),
        sdi_client=_issue(directory, "sdi-client", "sdi-client.test", issuer, "client"),
        intermediaries_server={
            name: _issue(directory, f"{name}-server", f"{name}.test", issuer, "server")
            for name in intermediaries
        },
        intermediaries_client={
            name: _issue(directory, f"{name}-client", f"{name}-client.test", issuer, "client")
            for name in intermediaries
        },
        other_ca=other_ca,
        other_client=_issue(directory, "other-client", "other-client.test", other_issuer, "client"),
    )
