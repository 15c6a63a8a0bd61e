"""CAdES-BES attached envelopes (`.p7m`): unwrap the invoice and verify the signature.

asn1crypto reads DER and BER alike (indefinite lengths, chunked OCTET STRINGs) and keeps the
original bytes of the signed attributes, so BER envelopes verify without re-serialising. It also
builds an object of ~150 bytes per element it reaches, and joins BER chunks in quadratic time: an
envelope is refused past `MAX_ELEMENTS` elements before asn1crypto sees it, and the content's
chunks are joined here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import islice

from asn1crypto import cms
from asn1crypto import x509 as asn1_x509
from asn1crypto.core import Void
from cryptography import x509
from pyhanko.sign.validation.generic_cms import extract_self_reported_ts, validate_sig_integrity

from varco.fatturapa.errors import refuse
from varco.fatturapa.signatures import (
    SignatureReport,
    broken_report,
    chains_to,
    describe_certificate,
    valid_at,
)

# A signed invoice has ~200 elements (certificates, attributes); BER chunks of 1,000 bytes add
# ~5,000 to a 5 MB invoice. 4 MB of empty elements in a certificate SET grew the heap by 300 MB.
MAX_ELEMENTS = 50_000
_HINT = "Send the signed file as produced by the signing tool (.p7m, CAdES-BES with the invoice attached)."


@dataclass(frozen=True)
class CadesEnvelope:
    signed_data: cms.SignedData
    content: bytes  # the encapsulated invoice
    encoding: str  # "DER" or "BER" (prefixed "base64+" by the caller when it was base64)


def open_cades(data: bytes) -> CadesEnvelope:
    """Parse a CMS SignedData and return its encapsulated content; 0092 when that is impossible."""
    if next(islice(_elements(data), MAX_ELEMENTS, None), None) is not None:
        raise refuse("0092", f"The CAdES envelope has more than {MAX_ELEMENTS} ASN.1 elements", _HINT)
    try:
        info = cms.ContentInfo.load(data)
        content_type = info["content_type"].native
        if content_type != "signed_data":
            raise refuse("0092", f"The file is a CMS {content_type}, not a CAdES signed-data envelope", _HINT)
        signed_data = info["content"]
        content = _octets(signed_data["encap_content_info"]["content"])
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise refuse(
            "0092", f"The file is neither XML nor a readable CAdES (.p7m) envelope: {exc}", _HINT
        ) from None
    if content is None:
        raise refuse("0092", "The CAdES envelope is detached: it does not contain the invoice", _HINT)
    # 0x80 after the outer SEQUENCE tag is an indefinite length: BER, not DER.
    return CadesEnvelope(signed_data, content, "BER" if data[1:2] == b"\x80" else "DER")


def _octets(value: cms.ParsableOctetString) -> bytes | None:
    """An OCTET STRING's value; a BER constructed one is the join of its primitive chunks."""
    if isinstance(value, Void):
        return None
    if value.method == 0:
        return bytes(value.contents)
    contents = value.contents
    return b"".join(contents[start:end] for primitive, start, end in _elements(contents) if primitive)


def _elements(data: bytes) -> Iterator[tuple[bool, int, int]]:
    """(primitive, start, end of contents) of every BER element, in order, stepping into the
    contents of constructed ones (which are elements too) rather than over them."""
    pointer = 0
    while pointer + 2 <= len(data):
        tag = data[pointer]
        pointer += 1
        if tag & 0x1F == 0x1F:  # high tag number: base-128 bytes, the last without bit 8
            while pointer < len(data) and data[pointer] & 0x80:
                pointer += 1
            pointer += 1
        length = data[pointer] if pointer < len(data) else 0
        pointer += 1
        if length > 0x80:  # long form: the length is in the next (length & 0x7F) bytes
            size = length & 0x7F
            length, pointer = int.from_bytes(data[pointer : pointer + size], "big"), pointer + size
        if tag & 0x20 or length == 0x80:  # constructed or indefinite: its contents follow
            yield False, pointer, pointer
            continue
        yield True, pointer, min(pointer + length, len(data))
        pointer += length


def verify_cades(envelope: CadesEnvelope, encoding: str, trust_roots: tuple[bytes, ...]) -> SignatureReport:
    """Check every SignerInfo (digest over the content, signature value, validity at signing time).

    The report describes the first signer; a failure of any signer is reported in `error`.
    """
    signed_data = envelope.signed_data
    choices = signed_data["certificates"]
    certs = [] if isinstance(choices, Void) else [c.chosen for c in choices if c.name == "certificate"]
    content_type = signed_data["encap_content_info"]["content_type"].native
    reports = [
        _verify_signer(si, certs, envelope.content, content_type, encoding, trust_roots)
        for si in signed_data["signer_infos"]
    ]
    if not reports:
        return broken_report("CAdES", encoding, "the envelope has no SignerInfo")
    first = reports[0]
    failed = next((r for r in reports if not r.is_intact), None)
    if failed is None or failed is first:
        return first
    return replace(
        first,
        digest_ok=failed.digest_ok,
        signature_ok=failed.signature_ok,
        certificate_valid_at_signing=failed.certificate_valid_at_signing,
        error=f"signer {failed.signer}: {failed.error}",
    )


def _verify_signer(
    signer_info: cms.SignerInfo,
    certs: list[asn1_x509.Certificate],
    content: bytes,
    content_type: str,
    encoding: str,
    trust_roots: tuple[bytes, ...],
) -> SignatureReport:
    cert = _signer_certificate(signer_info["sid"], certs)
    if cert is None:
        return broken_report("CAdES", encoding, "the signer's certificate is not in the envelope")
    crypto_cert = x509.load_der_x509_certificate(cert.dump())
    signing_time: datetime | None = None
    error = None
    try:
        signing_time = extract_self_reported_ts(signer_info)
        digest = hashlib.new(signer_info["digest_algorithm"]["algorithm"].native, content).digest()
        digest_ok, signature_ok = validate_sig_integrity(signer_info, cert, content_type, digest)
    except (ValueError, TypeError, KeyError) as exc:  # pyHanko's errors are ValueErrors
        digest_ok = signature_ok = False
        error = str(exc) or type(exc).__name__
    valid = valid_at(crypto_cert, signing_time)
    if error is None:
        error = _failure(digest_ok, signature_ok, valid, signing_time)
    intermediates = [x509.load_der_x509_certificate(c.dump()) for c in certs if c is not cert]
    return SignatureReport(
        kind="CAdES",
        encoding=encoding,
        **describe_certificate(crypto_cert),  # type: ignore[arg-type]
        signing_time=signing_time,
        digest_ok=digest_ok,
        signature_ok=signature_ok,
        certificate_valid_at_signing=valid,
        trusted=chains_to(crypto_cert, intermediates, trust_roots),
        error=error,
    )


def _signer_certificate(
    sid: cms.SignerIdentifier, certs: list[asn1_x509.Certificate]
) -> asn1_x509.Certificate | None:
    if sid.name == "issuer_and_serial_number":
        issuer, serial = sid.chosen["issuer"], sid.chosen["serial_number"].native
        return next((c for c in certs if c.issuer == issuer and c.serial_number == serial), None)
    key_id = sid.chosen.native
    return next((c for c in certs if c.key_identifier == key_id), None)


def _failure(
    digest_ok: bool, signature_ok: bool, valid: bool | None, signing_time: datetime | None
) -> str | None:
    if not digest_ok:
        return "the content does not match the signed message digest (file altered after signing)"
    if not signature_ok:
        return "the signature value does not verify with the signer's certificate"
    if valid is False:
        return f"the certificate was not valid at the signing time {signing_time}"
    return None
