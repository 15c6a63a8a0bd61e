"""The simulator's XML signature: an RSA key and self-signed certificate made once per database."""

from __future__ import annotations

import base64
import copy
import hashlib
import threading
from datetime import timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID
from lxml import etree

from varco.core.clock import Clock
from varco.core.dialects import dialect_of
from varco.core.uow import UnitOfWork
from varco.sdi.models import SimKey

_DS = "http://www.w3.org/2000/09/xmldsig#"
_C14N = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
_RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
_SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256"
_ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
# database URL -> (key, certificate PEM, the certificate's DER in base64 for ds:X509Certificate)
_Identity = tuple[rsa.RSAPrivateKey, bytes, str]
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
    der = x509.load_pem_x509_certificate(cert_pem).public_bytes(serialization.Encoding.DER)
    identity = (key, cert_pem, base64.b64encode(der).decode())
    if stored:  # a key inserted by this transaction may still roll back: cache it next time
        with _lock:
            _cache[url] = identity
    return identity


def sign(session: UnitOfWork, root: etree._Element, clock: Clock) -> etree._Element:
    """Enveloped XML-DSig, as the SDI signs its messages: RSA-SHA256 over inclusive C14N 1.0, one
    reference to the whole document (URI="", the enveloped-signature and C14N transforms), the
    certificate in KeyInfo. Returns a signed copy of `root`, the ds:Signature its last child, where
    MessaggiTypes wants it.

    Built here, in the structure signxml's XMLSigner gives, rather than by it: its Python held the
    GIL for most of what a signature cost `varco serve` (the RSA operation releases it), one
    message per invoice (docs/performance.md, "Less per invoice"). Verified by signxml's
    XMLVerifier in the tests."""
    key, _, certificate = _identity(session, clock)
    root = copy.deepcopy(root)  # a signed copy, as signxml gave: the element may be signed again
    # The digest of the document without its signature: what the enveloped transform leaves.
    digest = base64.b64encode(hashlib.sha256(etree.tostring(root, method="c14n")).digest())
    signature = etree.SubElement(root, f"{{{_DS}}}Signature", nsmap={"ds": _DS})
    signed_info = _ds(signature, "SignedInfo")
    _ds(signed_info, "CanonicalizationMethod", Algorithm=_C14N)
    _ds(signed_info, "SignatureMethod", Algorithm=_RSA_SHA256)
    reference = _ds(signed_info, "Reference", URI="")
    transforms = _ds(reference, "Transforms")
    _ds(transforms, "Transform", Algorithm=_ENVELOPED)
    _ds(transforms, "Transform", Algorithm=_C14N)
    _ds(reference, "DigestMethod", Algorithm=_SHA256)
    _ds(reference, "DigestValue").text = digest.decode()
    value = key.sign(etree.tostring(signed_info, method="c14n"), padding.PKCS1v15(), hashes.SHA256())
    _ds(signature, "SignatureValue").text = base64.b64encode(value).decode()
    _ds(_ds(_ds(signature, "KeyInfo"), "X509Data"), "X509Certificate").text = certificate
    return root


def _ds(parent: etree._Element, name: str, **attributes: str) -> etree._Element:
    return etree.SubElement(parent, f"{{{_DS}}}{name}", attributes)


def certificate_pem(session: UnitOfWork, clock: Clock) -> bytes:
    """The simulator's certificate (to verify its signatures)."""
    return _identity(session, clock)[1]
