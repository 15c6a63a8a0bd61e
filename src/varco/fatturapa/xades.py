"""XAdES-BES enveloped signatures: a `ds:Signature` child of the invoice root, verified with signxml.

Trust is not enforced here (decisions.md), so the certificate embedded in the signature verifies
it; the certificate's validity is judged at the signed xades:SigningTime, not today.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from lxml import etree
from signxml.exceptions import InvalidDigest
from signxml.xades import XAdESSignatureConfiguration, XAdESVerifier

from varco.fatturapa.parsing import hardened_parser
from varco.fatturapa.signatures import (
    SignatureReport,
    broken_report,
    chains_to,
    describe_certificate,
    valid_at,
)

DS = "http://www.w3.org/2000/09/xmldsig#"
XADES = "http://uri.etsi.org/01903/v1.3.2#"
_NS = {"ds": DS, "xades": XADES}
_DIGESTS = {
    "http://www.w3.org/2000/09/xmldsig#sha1": hashes.SHA1,
    "http://www.w3.org/2001/04/xmlenc#sha256": hashes.SHA256,
    "http://www.w3.org/2001/04/xmldsig-more#sha384": hashes.SHA384,
    "http://www.w3.org/2001/04/xmlenc#sha512": hashes.SHA512,
}


_SIGNATURE = f"{{{DS}}}Signature"


def enveloped_signature(root: etree._Element) -> etree._Element | None:
    """The `ds:Signature` the FatturaPA schema allows as the root's last child, if any (the first
    such child, as `find` reads it: a plain walk over the root's few children costs less)."""
    for item in root:
        if item.tag == _SIGNATURE:
            return item
    return None


def verify_xades(
    content: bytes, root: etree._Element, encoding: str, trust_roots: tuple[bytes, ...]
) -> SignatureReport:
    """Verify the enveloped signature of `root` (parsed from `content`)."""
    signature = enveloped_signature(root)
    certs = [
        x509.load_der_x509_certificate(base64.b64decode("".join((el.text or "").split())))
        for el in signature.iterfind("ds:KeyInfo/ds:X509Data/ds:X509Certificate", _NS)
    ]  # an unreadable one raises: check_sync reports the signature as broken
    if not certs:
        return broken_report("XAdES", encoding, "the signature carries no ds:X509Certificate")
    cert = _signing_certificate(signature, certs)
    signing_time = _signing_time(signature)
    digest_ok, signature_ok, error = _verify(content, root, cert, signing_time)
    valid = valid_at(cert, signing_time)
    if error is None and valid is False:
        error = f"the certificate was not valid at the signing time {signing_time}"
    return SignatureReport(
        kind="XAdES",
        encoding=encoding,
        **describe_certificate(cert),  # type: ignore[arg-type]
        signing_time=signing_time,
        digest_ok=digest_ok,
        signature_ok=signature_ok,
        certificate_valid_at_signing=valid,
        trusted=chains_to(cert, [c for c in certs if c is not cert], trust_roots),
        error=error,
    )


def _verify(
    content: bytes, root: etree._Element, cert: x509.Certificate, signing_time: datetime | None
) -> tuple[bool, bool, str | None]:
    """(digest_ok, signature_ok, error) from signxml, with `cert` as the trusted key."""
    # signxml refuses a certificate outside its validity at verification_time: verify inside the
    # window and judge validity at the signing time separately, so that a broken signature and a
    # certificate expired when signing are reported as what they are.
    moment = signing_time or cert.not_valid_before_utc
    moment = min(max(moment, cert.not_valid_before_utc), cert.not_valid_after_utc)
    config = XAdESSignatureConfiguration(location="./", expect_references=True, verification_time=moment)
    try:
        results = XAdESVerifier().verify(
            content, x509_cert=cert, parser=hardened_parser(), expect_config=config
        )
    except InvalidDigest as exc:  # raised after the signature value verified
        return False, True, f"the invoice does not match the signed digest (altered after signing): {exc}"
    # signxml lets lxml and cryptography errors through (DocumentInvalid, UnsupportedAlgorithm...):
    # any failure here means the signature value does not verify.
    except Exception as exc:
        return False, False, f"the signature does not verify: {exc}"
    # See what is signed: one reference must be the whole invoice (URI="" enveloped).
    if not any(r.signed_xml is not None and r.signed_xml.tag == root.tag for r in results):
        return False, True, "the signature does not cover the whole invoice (no reference to the document)"
    return True, True, None


def _signing_certificate(signature: etree._Element, certs: list[x509.Certificate]) -> x509.Certificate:
    """The certificate named by xades:SigningCertificate(V2), else the first one."""
    for cert_digest in signature.iterfind(".//xades:SignedSignatureProperties//xades:CertDigest", _NS):
        method = cert_digest.find("ds:DigestMethod", _NS)
        algorithm = _DIGESTS.get(method.get("Algorithm", "")) if method is not None else None
        value = cert_digest.findtext("ds:DigestValue", "", _NS)
        for cert in certs if algorithm else ():
            if base64.b64encode(cert.fingerprint(algorithm())).decode() == "".join(value.split()):
                return cert
    return certs[0]


def _signing_time(signature: etree._Element) -> datetime | None:
    text = signature.findtext(".//xades:SignedSignatureProperties/xades:SigningTime", None, _NS)
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
