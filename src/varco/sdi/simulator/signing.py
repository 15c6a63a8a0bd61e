"""The simulator's XML signature: an RSA key and self-signed certificate made once per database."""

from __future__ import annotations

import threading
from datetime import timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from lxml import etree
from signxml import XMLSigner, methods

from varco.core.clock import Clock
from varco.core.dialects import dialect_of
from varco.core.uow import UnitOfWork
from varco.sdi.models import SimKey

_C14N = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
# database URL -> (key, certificate PEM, the certificate parsed: signxml then does not reparse it)
_Identity = tuple[rsa.RSAPrivateKey, bytes, x509.Certificate]
_cache: dict[str, _Identity] = {}
_lock = threading.Lock()


def _generate(clock: Clock) -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "IT"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "varco"),
            x509.NameAttribute(NameOID.COMMON_NAME, "Sistema di Interscambio (simulatore varco)"),
        ]
    )
    now = clock.now()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=3650))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return key_pem.decode(), certificate.public_bytes(serialization.Encoding.PEM).decode()


def _identity(session: UnitOfWork, clock: Clock) -> _Identity:
    url = str(session.get_bind().url)
    with _lock:
        if url in _cache:
            return _cache[url]
    row = session.get(SimKey, 1)
    stored = row is not None
    if row is None:
        key_pem, cert_pem = _generate(clock)
        # Two workers may generate at once: the first insert wins, both then read the same row.
        insert = dialect_of(session).insert
        session.execute(
            insert(SimKey)
            .values(id=1, key_pem=key_pem, cert_pem=cert_pem, created_at=clock.now())
            .on_conflict_do_nothing()
        )
        row = session.get(SimKey, 1, populate_existing=True)
    assert row is not None
    key = serialization.load_pem_private_key(row.key_pem.encode(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    cert_pem = row.cert_pem.encode()
    identity = (key, cert_pem, x509.load_pem_x509_certificate(cert_pem))
    if stored:  # a key inserted by this transaction may still roll back: cache it next time
        with _lock:
            _cache[url] = identity
    return identity


def sign(session: UnitOfWork, root: etree._Element, clock: Clock) -> etree._Element:
    """Enveloped XML-DSig: the ds:Signature becomes the last child, where MessaggiTypes wants it."""
    key, _, certificate = _identity(session, clock)
    signer = XMLSigner(
        method=methods.enveloped,
        signature_algorithm="rsa-sha256",
        digest_algorithm="sha256",
        c14n_algorithm=_C14N,
    )
    return signer.sign(root, key=key, cert=[certificate])


def certificate_pem(session: UnitOfWork, clock: Clock) -> bytes:
    """The simulator's certificate (to verify its signatures)."""
    return _identity(session, clock)[1]
