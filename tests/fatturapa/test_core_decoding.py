"""decode_base64: tolerant of wrapping, strict about the alphabet (0002 empty, 0098 invalid)."""

from __future__ import annotations

import base64

import pytest

from varco.fatturapa import FatturaPAError, decode_base64

XML = b'<?xml version="1.0" encoding="UTF-8"?><a>fattura</a>'


def test_single_line_base64_decodes():
    assert decode_base64(base64.b64encode(XML).decode()) == XML


def test_wrapped_base64_with_crlf_and_spaces_decodes():
    encoded = base64.encodebytes(XML * 20).replace(b"\n", b"\r\n  ")
    assert decode_base64(encoded) == XML * 20


def test_missing_padding_is_tolerated():
    assert decode_base64(base64.b64encode(b"ab").rstrip(b"=")) == b"ab"


@pytest.mark.parametrize("data", [None, "", b"", "  \r\n "])
def test_missing_or_empty_data_file_is_0002(data):
    with pytest.raises(FatturaPAError) as raised:
        decode_base64(data)
    assert raised.value.finding.code == "0002"
    assert "dataFile" in raised.value.finding.message


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        ("not base64!", "'!'"),
        ("PD94bWwg-_", "'-'"),
        ("PD94=bWwg", "offset 4"),
        ("PD94b", "length 5"),
        ("PD94bWwgé", "non-ASCII"),
    ],
)
def test_invalid_base64_is_0098_and_says_where(data, detail):
    with pytest.raises(FatturaPAError) as raised:
        decode_base64(data)
    finding = raised.value.finding
    assert finding.code == "0098"
    assert detail in finding.message
    assert finding.hint
    assert finding.upload_text.startswith("0098 - Base64 encoding")
