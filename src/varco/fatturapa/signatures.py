"""What a signature check reports, and the checks CAdES and XAdES share (validity, trust)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import lru_cache
from typing import Literal

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class SignatureReport:
    """The signature of a signed invoice: who signed, when, and whether it holds."""

    kind: Literal["CAdES", "XAdES"]
    encoding: str  # "DER", "BER", "base64+DER", "base64+BER", "XML", "base64+XML"
    signer: str | None  # subject common name (or the whole subject when there is no CN)
    issuer: str | None
    serial: str | None  # decimal, as a string: serials exceed 2**53
    not_before: datetime | None
    not_after: datetime | None
    signing_time: datetime | None  # the signed signing-time attribute, if any
    digest_ok: bool  # the signed digest matches the content (False when it could not be checked)
    signature_ok: bool  # the signature value verifies with the signer's public key
    certificate_valid_at_signing: bool | None  # None when the signature carries no signing time
    trusted: bool  # the certificate chains to a configured trust root
    error: str | None = None

    @property
    def is_intact(self) -> bool:
        """Integrity as decisions.md defines it: digest, signature value, validity at signing time."""
        return self.digest_ok and self.signature_ok and self.certificate_valid_at_signing is not False

    def as_dict(self) -> dict[str, object]:
        return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in asdict(self).items()}


def broken_report(kind: Literal["CAdES", "XAdES"], encoding: str, error: str) -> SignatureReport:
    """A signature that could not be checked at all (no certificate, unreadable structure)."""
    return SignatureReport(
        kind=kind,
        encoding=encoding,
        signer=None,
        issuer=None,
        serial=None,
        not_before=None,
        not_after=None,
        signing_time=None,
        digest_ok=False,
        signature_ok=False,
        certificate_valid_at_signing=None,
        trusted=False,
        error=error,
    )


def describe_certificate(cert: x509.Certificate) -> dict[str, object]:
    """The SignatureReport fields that come from the signer's certificate."""
    return {
        "signer": _common_name(cert.subject),
        "issuer": _common_name(cert.issuer),
        "serial": str(cert.serial_number),
        "not_before": cert.not_valid_before_utc,
        "not_after": cert.not_valid_after_utc,
    }


def valid_at(cert: x509.Certificate, moment: datetime | None) -> bool | None:
    """Whether `moment` falls in the certificate's validity period (None when there is no moment)."""
    if moment is None:
        return None
    return cert.not_valid_before_utc <= moment <= cert.not_valid_after_utc


def chains_to(
    cert: x509.Certificate, intermediates: Sequence[x509.Certificate], roots: tuple[bytes, ...]
) -> bool:
    """True when issuer signatures link `cert`, through `intermediates`, to one of `roots`.

    Only signatures and names are checked (no revocation, no validity window): trust is reported,
    and refusing untrusted signers is an opt-in (decisions.md).
    """
    anchors = load_certificates(roots)
    if not anchors:
        return False
    current, pool = cert, list(intermediates)
    for _ in range(8):  # a real chain is 2-4 long; the bound stops loops
        if any(current == anchor or _issued_by(current, anchor) for anchor in anchors):
            return True
        parent = next((c for c in pool if c != current and _issued_by(current, c)), None)
        if parent is None:
            return False
        pool.remove(parent)
        current = parent
    return False


@lru_cache(maxsize=16)
def load_certificates(blobs: tuple[bytes, ...]) -> tuple[x509.Certificate, ...]:
    """Parse PEM (possibly several per blob) or DER certificates, once per distinct tuple."""
    certs: list[x509.Certificate] = []
    for blob in blobs:
        if b"-----BEGIN" in blob:
            certs.extend(x509.load_pem_x509_certificates(blob))
        else:
            certs.append(x509.load_der_x509_certificate(blob))
    return tuple(certs)


def _issued_by(child: x509.Certificate, parent: x509.Certificate) -> bool:
    try:
        child.verify_directly_issued_by(parent)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _common_name(name: x509.Name) -> str:
    names: Iterable[x509.NameAttribute] = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    for attribute in names:
        return str(attribute.value)
    return name.rfc4514_string()
