"""The SDI's controls on the transmitted file (00001–00003, 00102, 00106, 00200/00201) and on
duplicates (00404 against the sender's history, 00409 within a batch); every control registered
with its text and hint, and in docs/sdi-controls.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml import etree

from tests.fatturapa.cases_support import RECEIVED_DATE
from tests.fatturapa.sdi_controls.support import base, codes, edited, sdi_findings, xml
from varco.fatturapa import CheckOptions, check, check_sync
from varco.fatturapa.sdi_controls import CONTROLS, FILE_CONTROLS, InvoiceKey, SdiFacts, check_sdi, keys_of

DOCS = Path(__file__).resolve().parents[3] / "docs" / "sdi-controls.md"


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("IT01234567890_00001.xml", True),
        ("IT01234567890_a1B2c.xml.p7m", True),
        ("IT01234567890_00001.zip", True),
        ("fattura.xml", False),
        ("IT01234567890-00001.xml", False),
        ("IT01234567890_000001.xml", False),
        ("IT01234567890_00001.pdf", False),
    ],
)
def test_00001_the_file_name(name, ok):
    assert ("00001" not in codes(base(), SdiFacts(filename=name))) is ok


def test_00002_a_name_transmitted_before():
    name = "IT01234567890_00001.xml"
    assert "00002" in codes(base(), SdiFacts(filename=name, file_name_seen=lambda n: n == name))
    assert codes(base(), SdiFacts(filename=name, file_name_seen=lambda n: False)) == set()


def test_00003_size_at_and_over_the_limit():
    limit = 5 * 1024 * 1024
    assert codes(base(), SdiFacts(size=limit)) == set()
    assert codes(base(), SdiFacts(size=limit + 1)) == {"00003"}


@pytest.mark.parametrize("data", [b"", b"   \n", b"\x30\x82\x00\x10garbage-not-asn1"])
def test_00106_empty_or_corrupt(data):
    assert codes(data) == {"00106"}


def test_00200_not_xml_and_each_xsd_error_with_its_place():
    assert codes(b"<FatturaElettronica><unclosed>") == {"00200"}
    root = base()
    root.find(".//DatiGeneraliDocumento/Numero").getparent().remove(
        root.find(".//DatiGeneraliDocumento/Numero")
    )
    [finding] = sdi_findings(root)
    assert finding.code == "00200" and "Numero" in finding.message and finding.xpath


def test_00201_past_fifty_format_errors_the_first_fifty_listed():
    root = base()
    lines = root.findall(".//DettaglioLinee")
    template = xml(lines[-1])
    parent = lines[-1].getparent()
    index = parent.index(lines[-1])
    for n in range(60):  # each line with an amount the XSD refuses
        line = etree.fromstring(template)
        line.find("PrezzoUnitario").text = "1,00"
        parent.insert(index + 1 + n, line)
    findings = sdi_findings(root)
    assert [f.code for f in findings].count("00200") == 50
    assert findings[-1].code == "00201"


def test_00102_a_signature_that_does_not_verify(invoice, signer):
    envelope = signer.cades(invoice("FPR12"))
    assert codes(envelope) == set()
    tampered = envelope.replace(b"<Numero>123</Numero>", b"<Numero>124</Numero>")
    assert codes(tampered) == {"00102"}


def test_00404_an_invoice_the_sender_sent_before():
    root = base()
    [key] = keys_of(check(xml(root), CheckOptions(received_date=RECEIVED_DATE)))
    assert isinstance(key, InvoiceKey) and key.supplier.startswith("IT")
    [finding] = sdi_findings(root, SdiFacts(invoice_seen=lambda k: k == key))
    assert finding.code == "00404" and key.number in finding.message
    other = InvoiceKey(key.supplier, key.document_type, key.number + "1", key.date)
    assert codes(root, SdiFacts(invoice_seen=lambda k: k == other)) == set()


def test_00409_the_same_invoice_twice_in_a_batch():
    def same_number(root):
        numbers = root.findall(".//DatiGeneraliDocumento/Numero")
        dates = root.findall(".//DatiGeneraliDocumento/Data")
        types = root.findall(".//DatiGeneraliDocumento/TipoDocumento")
        numbers[1].text, dates[1].text, types[1].text = numbers[0].text, dates[0].text, types[0].text

    findings = sdi_findings(edited("batch", same_number))
    assert [(f.code, f.body) for f in findings] == [("00409", 2)]
    assert codes(base("batch")) == set()


def test_the_controls_run_on_the_contract_report_without_parsing_again():
    report = check_sync(xml(base()))
    assert check_sdi(report) == []


def test_every_control_has_its_text_and_hint_and_a_row_in_the_docs():
    table = DOCS.read_text()
    registered = {spec.code for spec in CONTROLS} | set(FILE_CONTROLS)
    for spec in CONTROLS:
        assert spec.text and spec.hint, spec.code
    documented = set(re.findall(r"^\| (\d{5}) \|", table, flags=re.MULTILINE))
    assert registered <= documented, registered - documented
