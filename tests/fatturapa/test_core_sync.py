"""check_sync: size, emptiness, parsing, XSD, stage order, input encodings."""

from __future__ import annotations

import base64

from lxml import etree

from tests.fatturapa.core_support import TRANSMITTER_ID
from varco.fatturapa import CheckOptions, check_sync

HEADER = "FatturaElettronicaHeader"
BODY = "FatturaElettronicaBody"


def test_valid_invoice_is_accepted_with_content_root_format_and_summary(invoice):
    data = invoice("FPR12")
    report = check_sync(data, CheckOptions(transmitter_id=TRANSMITTER_ID, account_vat="IT01234560017"))
    assert report.accepted and report.errors == []
    assert report.format == "FPR12"
    assert report.content == data
    assert report.root.tag.endswith("}FatturaElettronica")
    assert report.summary.supplier.vat_code == "01234560017"
    assert report.signature is None


def test_file_over_max_bytes_is_0033(invoice):
    data = invoice("FPR12")
    report = check_sync(data, CheckOptions(max_bytes=len(data) - 1))
    assert [f.code for f in report.errors] == ["0033"]
    assert f"{len(data)} bytes" in report.errors[0].message
    assert str(len(data) - 1) in report.errors[0].message
    assert report.content is None  # refused before reading it


def test_default_limit_is_five_megabytes():
    report = check_sync(b" " * (5 * 1024 * 1024 + 1))
    assert [f.code for f in report.errors] == ["0033"]


def test_empty_file_is_fatrsm401():
    for data in (b"", b" \r\n\t"):
        report = check_sync(data)
        assert [f.code for f in report.errors] == ["FATRSM401"]
        assert not report.accepted


def test_malformed_xml_is_0092_with_line_and_parser_message():
    data = b'<?xml version="1.0" encoding="UTF-8"?>\n<root>\n  <a>text</b>\n</root>'
    [finding] = check_sync(data).errors
    assert finding.code == "0092"
    assert "line 3" in finding.message
    assert "Opening and ending tag mismatch" in finding.message


def test_invalid_utf8_bytes_are_0092_with_line(invoice):
    data = invoice("FPR12").replace(b"SOCIETA' ALPHA", "SOCIETÀ ALPHA".encode("latin-1"))
    [finding] = check_sync(data).errors
    assert finding.code == "0092"
    assert "line 27" in finding.message
    assert "UTF-8" in finding.message


def test_declared_non_utf8_encoding_is_0092(invoice):
    data = invoice("FPR12").replace(b'encoding="UTF-8"', b'encoding="ISO-8859-1"', 1)
    assert b"ISO-8859-1" in data
    [finding] = check_sync(data).errors
    assert finding.code == "0092"
    assert "ISO-8859-1" in finding.message and "UTF-8" in finding.message


def test_utf8_bom_is_accepted(invoice):
    assert check_sync(b"\xef\xbb\xbf" + invoice("FPR12")).accepted


def test_xsd_error_names_element_line_and_path(invoice):
    data = invoice("FPR12").replace(b"<TipoDocumento>TD01<", b"<TipoDocumento>TD99<")
    report = check_sync(data, CheckOptions(transmitter_id="IT99999999999"))
    [finding] = report.errors  # stops at the XSD: the wrong transmitter is not reported
    assert finding.code == "0092"
    assert "TipoDocumento at /p:FatturaElettronica/" in finding.message
    assert "'TD99' is not an accepted value" in finding.message
    assert "line 62" in finding.message
    assert (
        finding.xpath
        == "/p:FatturaElettronica/FatturaElettronicaBody/DatiGenerali/DatiGeneraliDocumento/TipoDocumento"
    )
    assert finding.body == 1
    assert finding.hint
    assert report.summary is None


def test_xsd_errors_are_all_collected_with_their_body(invoice):
    root = etree.fromstring(invoice("FPR12"))
    second = etree.fromstring(etree.tostring(root.find(BODY)))
    root.append(second)
    second.find("DatiGenerali/DatiGeneraliDocumento/Divisa").text = "euro"
    root.find(f"{HEADER}/DatiTrasmissione/ProgressivoInvio").text = "x" * 11
    report = check_sync(etree.tostring(root))
    assert [f.code for f in report.errors] == ["0092", "0092"]
    assert "ProgressivoInvio" in report.errors[0].message and report.errors[0].body is None
    assert "Divisa" in report.errors[1].message and report.errors[1].body == 2
    assert report.errors[1].xpath.endswith(
        "FatturaElettronicaBody[2]/DatiGenerali/DatiGeneraliDocumento/Divisa"
    )


def test_official_fpr02_fails_the_xsd(samples_dir):
    report = check_sync((samples_dir / "IT01234567890_FPR02.xml").read_bytes())
    [finding] = report.errors
    assert finding.code == "0092"
    assert "line 16" in finding.message and "ContattiTrasmittente" in finding.message
    assert finding.xpath.endswith("/DatiTrasmissione/ContattiTrasmittente")


def test_unknown_root_element_is_0092():
    [finding] = check_sync(b'<?xml version="1.0"?>\n<Fattura versione="FPR12"/>').errors
    assert finding.code == "0092"
    assert "root element Fattura is not an invoice" in finding.message


def test_doctype_with_external_entity_is_refused_without_reading_the_file(invoice, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    doctype = f'<!DOCTYPE p:FatturaElettronica [<!ENTITY xxe SYSTEM "file://{secret}">]>\n'.encode()
    data = invoice("FPR12").replace(b"?>\n", b"?>\n" + doctype, 1)
    data = data.replace(b"DESCRIZIONE DELLA FORNITURA", b"&xxe;")
    report = check_sync(data)
    [finding] = report.errors
    assert finding.code == "0092"
    assert "line 2" in finding.message and "DOCTYPE" in finding.message
    assert "TOP-SECRET-VALUE" not in repr(report)
    assert report.root is None


def test_billion_laughs_is_refused_without_expansion():
    entities = '<!ENTITY lol0 "lol">' + "".join(
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)
    )
    data = f'<?xml version="1.0"?>\n<!DOCTYPE lolz [{entities}]>\n<lolz>&lol9;</lolz>'.encode()
    report = check_sync(data)
    [finding] = report.errors
    assert finding.code == "0092" and "DOCTYPE" in finding.message
    assert len(repr(report)) < 10_000


def test_external_dtd_is_refused_without_network():
    data = b'<?xml version="1.0"?>\n<!DOCTYPE a SYSTEM "http://example.invalid/a.dtd">\n<a/>'
    [finding] = check_sync(data).errors
    assert finding.code == "0092" and "DOCTYPE" in finding.message


def test_base64_of_xml_is_unwrapped(invoice):
    data = invoice("FPR12")
    for encoded in (base64.b64encode(data), base64.encodebytes(data)):
        report = check_sync(encoded)
        assert report.accepted, report.errors
        assert report.content == data


def test_binary_that_is_neither_xml_nor_der_nor_base64_is_not_xml_0092():
    [finding] = check_sync(b"\x00\x01\x02 garbage \xff").errors
    assert finding.code == "0092"
    assert finding.message == "The file is not XML: its first bytes are 00 01 02 20 67 61 72 62"


def test_broken_base64_text_is_0098():
    encoded = base64.b64encode(b"<?xml version='1.0'?><a/>" * 10)
    [finding] = check_sync(encoded[:100] + b"!" + encoded[100:]).errors
    assert finding.code == "0098" and "offset 100" in finding.message


def test_base64_of_something_else_is_0092():
    [finding] = check_sync(base64.b64encode(b"just some text")).errors
    assert finding.code == "0092"
    assert "not XML" in finding.message and "neither XML nor a CAdES" in finding.message
    assert "it starts with 'just some text'" in finding.message


def test_simplified_invoice_uses_the_fsm10_schema(invoice):
    assert check_sync(invoice("FSM10")).format == "FSM10"
    data = invoice("FSM10", {f"{BODY}/DatiBeniServizi/Importo": "12.3"})
    [finding] = check_sync(data).errors
    assert finding.code == "0092"
    assert "FSM10" in finding.message and "Importo" in finding.message


def test_fpa12_is_accepted(invoice):
    report = check_sync(invoice("FPA12"), CheckOptions(transmitter_id=TRANSMITTER_ID))
    assert report.accepted and report.format == "FPA12"
