"""Helpers for the core fatturapa tests: valid invoices to edit, and a signer for CAdES/XAdES files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from asn1crypto import keys as asn1_keys
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from lxml import etree

from varco.core.coroutines import run_sync

CORE_FIXTURES = Path(__file__).parent / "core_fixtures"
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "fatturapa" / "samples"

# Valid check digits (the official samples' are wrong): supplier, client, transmitter.
SUPPLIER_VAT = "IT01234560017"
CLIENT_VAT = "IT09876540015"
TRANSMITTER_ID = "IT05555550028"
TRANSMITTER_CONTACTS = ("0612345678", "sdi@varco.example")

Edits = Mapping[str, str | None]


def valid_invoice(fmt: str = "FPR12", edits: Edits | None = None) -> bytes:
    """A valid invoice of `fmt` (FPA12, FPR12, FSM10); the file's bytes unless `edits` (see `edit_xml`)."""
    data = (CORE_FIXTURES / f"IT01234560017_{fmt}.xml").read_bytes()
    return edit_xml(data, edits) if edits else data


def edit_xml(data: bytes, edits: Edits) -> bytes:
    """Set texts by path from the root: a missing last step is appended to its parent; None removes."""
    root = etree.fromstring(data)
    for path, text in edits.items():
        element = root.find(path)
        if text is None:
            element.getparent().remove(element)
            continue
        if element is None:
            parent_path, _, name = path.rpartition("/")
            element = etree.SubElement(root.find(parent_path) if parent_path else root, name)
        element.text = text
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


@dataclass(frozen=True)
class Signer:
    """A self-signed certificate and key that sign invoices as CAdES-BES or XAdES-BES."""

    key: rsa.RSAPrivateKey
    cert: x509.Certificate

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def cades(self, content: bytes, signing_time: datetime | None = None) -> bytes:
        """An attached CAdES-BES envelope (DER) of `content`, with a signing-time attribute."""
        from pyhanko.sign.signers import SimpleSigner
        from pyhanko.sign.signers.pdf_cms import PdfCMSSignedAttributes
        from pyhanko_certvalidator.registry import SimpleCertificateStore

        cert = asn1_x509.Certificate.load(self.cert.public_bytes(serialization.Encoding.DER))
        key = asn1_keys.PrivateKeyInfo.load(
            self.key.private_bytes(
                serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        signer = SimpleSigner(
            signing_cert=cert, signing_key=key, cert_registry=SimpleCertificateStore.from_certs([cert])
        )
        attrs = PdfCMSSignedAttributes(signing_time=signing_time or datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
        info = run_sync(
            signer.async_sign_general_data(content, "sha256", detached=False, signed_attr_settings=attrs)
        )
        return info.dump()

    def xades(self, content: bytes) -> bytes:
        """The invoice with an enveloped XAdES-BES ds:Signature as the root's last child."""
        from signxml import methods
        from signxml.xades import XAdESSigner

        key_pem = self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        signed = XAdESSigner(method=methods.enveloped).sign(
            etree.fromstring(content), key=key_pem, cert=self.cert_pem
        )
        return etree.tostring(signed, xml_declaration=True, encoding="UTF-8")


def make_signer(not_before: datetime, not_after: datetime, name: str = "Mario Rossi") -> Signer:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name(
        [x509.NameAttribute(NameOID.COUNTRY_NAME, "IT"), x509.NameAttribute(NameOID.COMMON_NAME, name)]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(20250301)
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(
            x509.KeyUsage(True, True, False, False, False, False, False, False, False), critical=True
        )
        .sign(key, hashes.SHA256())
    )
    return Signer(key, cert)
