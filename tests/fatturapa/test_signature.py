"""Signed invoices: unwrap CAdES (DER, BER, base64) and XAdES, verify, report FATRSM302."""

from __future__ import annotations

import base64
from datetime import UTC, date, datetime

import pytest
from asn1crypto import cms

from varco.fatturapa import CheckOptions, check, check_async, check_sync

RECEIVED = date(2026, 11, 23)
SIGNED = {
    # file: (encoding, signer, signing time)
    "IT01234567890_FPR01.xml.p7m": (
        "base64+BER",
        "PAOLO GATTI",
        datetime(2021, 5, 12, 14, 26, 56, tzinfo=UTC),
    ),
    "IT01234567890_FPR03.xml.p7m": ("DER", "CORATO SERGIO", datetime(2018, 12, 21, 15, 58, 13, tzinfo=UTC)),
    "IT01234567890_FPR03.base64.xml.p7m": (
        "base64+DER",
        "CORATO SERGIO",
        datetime(2018, 12, 21, 15, 58, 13, tzinfo=UTC),
    ),
    "IT01234567890_FPR04.base64.xml.p7m": (
        "base64+DER",
        "CORATO SERGIO",
        datetime(2018, 12, 21, 15, 58, 13, tzinfo=UTC),
    ),
}


@pytest.mark.parametrize("name", sorted(SIGNED))
def test_real_signed_samples_unwrap_and_verify(samples_dir, name):
    encoding, signer, signing_time = SIGNED[name]
    report = check((samples_dir / "signed" / name).read_bytes(), CheckOptions(received_date=RECEIVED))
    signature = report.signature
    assert signature.kind == "CAdES"
    assert signature.encoding == encoding
    assert signature.signer == signer
    assert signature.signing_time == signing_time
    assert signature.digest_ok and signature.signature_ok
    assert signature.certificate_valid_at_signing is True  # expired today, valid when signed
    assert signature.not_after < datetime(2026, 1, 1, tzinfo=UTC)
    assert signature.trusted is False  # no trust roots configured
    assert signature.error is None
    assert report.content.startswith(b'<?xml version="1.0" encoding="UTF-8"?>')
    assert report.format == "FPR12"
    assert report.accepted, report.errors


def test_cades_der_of_a_valid_invoice_verifies(invoice, signer):
    data = invoice("FPR12")
    report = check(signer.cades(data), CheckOptions(received_date=RECEIVED))
    assert report.accepted, report.errors
    assert report.content == data
    signature = report.signature
    assert (signature.kind, signature.encoding, signature.signer) == ("CAdES", "DER", "Mario Rossi")
    assert signature.serial == "20250301"
    assert signature.signing_time == datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
    assert signature.digest_ok and signature.signature_ok and signature.certificate_valid_at_signing


def test_cades_as_wrapped_base64_verifies(invoice, signer):
    envelope = base64.encodebytes(signer.cades(invoice("FPR12")))
    report = check(envelope, CheckOptions(received_date=RECEIVED))
    assert report.accepted, report.errors
    assert report.signature.encoding == "base64+DER"


def test_tampered_cades_content_is_fatrsm302(invoice, signer):
    envelope = signer.cades(invoice("FPR12"))
    tampered = envelope.replace(b"<Numero>123</Numero>", b"<Numero>124</Numero>")
    assert tampered != envelope
    report = check_sync(tampered)
    assert report.accepted  # the content itself is a valid invoice
    assert report.signature.signature_ok and not report.signature.digest_ok
    [finding] = check_async(report, CheckOptions(received_date=RECEIVED))
    assert finding.code == "FATRSM302"
    assert finding.stage == "async"
    assert "altered after signing" in finding.message
    assert finding.hint


def test_cades_with_a_bad_signature_value_is_fatrsm302(invoice, signer):
    envelope = signer.cades(invoice("FPR12"))
    info = cms.ContentInfo.load(envelope)
    signer_info = info["content"]["signer_infos"][0]
    value = bytearray(signer_info["signature"].native)
    value[10] ^= 0xFF
    signer_info["signature"] = bytes(value)
    report = check(info.dump(force=True), CheckOptions(received_date=RECEIVED))
    assert report.signature.digest_ok and not report.signature.signature_ok
    assert [f.code for f in report.errors] == ["FATRSM302"]
    assert "signature value" in report.errors[0].message


def test_cades_signed_outside_the_certificate_validity_is_fatrsm302(invoice, expired_signer):
    envelope = expired_signer.cades(invoice("FPR12"), signing_time=datetime(2022, 6, 1, tzinfo=UTC))
    report = check(envelope, CheckOptions(received_date=RECEIVED))
    assert report.signature.digest_ok and report.signature.signature_ok
    assert report.signature.certificate_valid_at_signing is False
    [finding] = report.errors
    assert finding.code == "FATRSM302" and "not valid at the signing time" in finding.message


def test_cades_of_an_empty_file_is_fatrsm401(signer):
    assert [f.code for f in check_sync(signer.cades(b"")).errors] == ["FATRSM401"]


def test_cades_content_is_checked_like_plain_xml(invoice, signer):
    envelope = signer.cades(invoice("FPR12").replace(b"<TipoDocumento>TD01<", b"<TipoDocumento>TDXX<"))
    [finding] = check_sync(envelope).errors
    assert finding.code == "0092" and "TipoDocumento" in finding.message


def test_detached_or_corrupt_envelopes_are_0092(invoice, signer):
    envelope = signer.cades(invoice("FPR12"))
    info = cms.ContentInfo.load(envelope)
    del info["content"]["encap_content_info"]["content"]
    [finding] = check_sync(info.dump(force=True)).errors
    assert finding.code == "0092" and "detached" in finding.message
    [finding] = check_sync(envelope[:200]).errors
    assert finding.code == "0092" and "CAdES" in finding.message


def test_trust_is_reported_and_enforced_only_on_request(invoice, signer):
    envelope = signer.cades(invoice("FPR12"))
    trusted = check(envelope, CheckOptions(received_date=RECEIVED, trust_roots=(signer.cert_pem,)))
    assert trusted.accepted and trusted.signature.trusted
    untrusted = check(envelope, CheckOptions(received_date=RECEIVED, require_trusted=True))
    assert not untrusted.signature.trusted
    [finding] = untrusted.errors
    assert finding.code == "FATRSM302" and "trusted" in finding.message


def test_xades_enveloped_signature_verifies(invoice, signer):
    signed = signer.xades(invoice("FPR12"))
    report = check(signed, CheckOptions(received_date=RECEIVED))
    assert report.accepted, report.errors
    signature = report.signature
    assert (signature.kind, signature.encoding, signature.signer) == ("XAdES", "XML", "Mario Rossi")
    assert signature.digest_ok and signature.signature_ok
    assert signature.certificate_valid_at_signing is True
    assert signature.signing_time is not None


def test_tampered_xades_invoice_is_fatrsm302(invoice, signer):
    signed = signer.xades(invoice("FPR12")).replace(b"<Numero>123</Numero>", b"<Numero>124</Numero>")
    report = check(signed, CheckOptions(received_date=RECEIVED))
    assert report.signature.signature_ok and not report.signature.digest_ok
    [finding] = report.errors
    assert finding.code == "FATRSM302"
    assert finding.xpath == "/p:FatturaElettronica/ds:Signature"


def test_xades_with_a_bad_signature_value_is_fatrsm302(invoice, signer):
    signed = signer.xades(invoice("FPR12"))
    start = signed.index(b"<ds:SignatureValue>") + len(b"<ds:SignatureValue>")
    flipped = b"A" if signed[start : start + 1] != b"A" else b"B"
    report = check(signed[:start] + flipped + signed[start + 1 :], CheckOptions(received_date=RECEIVED))
    assert not report.signature.signature_ok
    assert [f.code for f in report.errors] == ["FATRSM302"]


def test_xades_as_base64_verifies(invoice, signer):
    report = check(base64.b64encode(signer.xades(invoice("FPR12"))), CheckOptions(received_date=RECEIVED))
    assert report.accepted and report.signature.encoding == "base64+XML"


def test_upload_signed_refuses_an_unsigned_file(invoice):
    [finding] = check_sync(invoice("FPR12"), CheckOptions(require_signed=True)).errors
    assert finding.code == "0002" and "not signed" in finding.message


def test_upload_refuses_a_signed_file(invoice, signer):
    for signed, kind in (
        (signer.cades(invoice("FPR12")), "CAdES"),
        (signer.xades(invoice("FPR12")), "XAdES"),
    ):
        [finding] = check_sync(signed, CheckOptions(require_signed=False)).errors
        assert finding.code == "0002" and kind in finding.message
        assert check_sync(signed, CheckOptions(require_signed=True)).accepted


def test_either_is_accepted_when_not_required(invoice, signer):
    assert check_sync(invoice("FPR12"), CheckOptions(require_signed=False)).accepted
    assert check_sync(signer.cades(invoice("FPR12"))).accepted


def test_cades_in_pem_armour_verifies(invoice, signer):
    body = base64.encodebytes(signer.cades(invoice("FPR12")))
    pem = b"-----BEGIN PKCS7-----\n" + body + b"-----END PKCS7-----\n"
    report = check(pem, CheckOptions(received_date=RECEIVED))
    assert report.accepted, report.errors
    assert report.signature.encoding == "base64+DER"


def test_cades_without_the_signer_certificate_is_fatrsm302(invoice, signer):
    info = cms.ContentInfo.load(signer.cades(invoice("FPR12")))
    del info["content"]["certificates"]
    report = check(info.dump(force=True), CheckOptions(received_date=RECEIVED))
    assert report.signature.error == "the signer's certificate is not in the envelope"
    [finding] = report.errors
    assert finding.code == "FATRSM302" and "certificate is not in the envelope" in finding.message
