"""A demo certification authority and signing identity, so automatic signature works out of the box."""

from __future__ import annotations

from datetime import datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, NoEncryption, pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DEMO_CREDENTIAL = "demo-credential"
DEMO_DOMAIN = "demo"


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "IT"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "varco demo"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def make_demo_pkcs12(subject: str, now: datetime, password: str | None = None) -> bytes:
    """A PKCS#12 with a key, its certificate and the demo CA (valid from yesterday for ten years)."""
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    not_before, not_after = now - timedelta(days=1), now + timedelta(days=3650)
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("varco demo CA"))
        .issuer_name(_name("varco demo CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=True,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    encryption = BestAvailableEncryption(password.encode()) if password else NoEncryption()
    return pkcs12.serialize_key_and_certificates(subject.encode(), key, cert, [ca_cert], encryption)
