"""CAdES unwrapping stays within the input: BER chunks joined, element floods refused before parsing."""

from __future__ import annotations

import tracemalloc
from datetime import date

from tests.fatturapa.ber_support import as_ber
from varco.fatturapa import CheckOptions, check, check_sync

OPTIONS = CheckOptions(received_date=date(2026, 11, 23))
MIB = 1 << 20


def traced_peak(function, *args):
    tracemalloc.start()
    try:
        result = function(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_ber_content_in_small_chunks_is_joined_and_verifies(invoice, signer):
    data = invoice("FPR12")
    for chunk in (1, 7, 1000):
        report = check(as_ber(signer.cades(data), chunk), OPTIONS)
        assert report.accepted, report.errors
        assert report.content == data and report.signature.encoding == "BER"


def test_a_flood_of_chunks_is_refused_before_parsing(signer):
    """asn1crypto joins chunks in quadratic time: 1,000,000 of them took 24 s."""
    many = as_ber(signer.cades(b"<a/>" * 15_000), 1)  # 60,000 one-byte chunks
    report, peak = traced_peak(check_sync, many, OPTIONS)
    [finding] = report.errors
    assert finding.code == "0092" and "more than 50000 ASN.1 elements" in finding.message
    assert peak < MIB


def test_a_flood_of_empty_certificates_is_refused_before_parsing(invoice, signer):
    """4 MB of two-byte elements: asn1crypto would build ~300 MB of objects for them."""
    padded = as_ber(signer.cades(invoice("FPR12")), 1000, certificates_padding=b"\xa1\x00" * (2 * MIB))
    report, peak = traced_peak(check_sync, padded, OPTIONS)
    [finding] = report.errors
    assert finding.code == "0092" and "ASN.1 elements" in finding.message
    assert peak < MIB
