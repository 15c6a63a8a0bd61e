"""PDF rendering: the text of every official sample and corpus base file is in the PDF (pypdf)."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from lxml import etree
from pypdf import PdfReader

from tests.invoices.support import invoice_xml
from tests.search.factories import premium, received, upload
from varco.rendering.document import read_document
from varco.rendering.pdf import render_pdf

CASES = Path(__file__).resolve().parents[1] / "fatturapa" / "cases"
FILES = sorted((CASES / "official").glob("*.xml")) + sorted((CASES / "base").glob("*.xml"))


def pdf_text(pdf: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


def squash(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_sample_renders_parties_bodies_lines_vat_and_payments(path: Path):
    document = read_document(path.read_bytes())
    text = squash(pdf_text(render_pdf(document, path.name)))
    assert document.bodies, "every sample has at least one body"
    expected = [document.supplier.name, document.customer.name, path.name]
    expected += [p.vat for p in (document.supplier, document.customer) if p.vat]
    for body in document.bodies:
        expected += [body.number, body.date, body.document_type]
        expected += [squash(line.description)[:40] for line in body.lines]
        expected += [row.tax for row in body.vat if row.tax]
        expected += [p.amount for p in body.payments if p.amount]
        expected += [p.iban for p in body.payments if p.iban]
    missing = [value for value in expected if value and squash(value) not in text]
    assert not missing, f"not in the PDF of {path.name}: {missing}"
    if len(document.bodies) > 1:
        assert f"Documento {len(document.bodies)}/{len(document.bodies)}" in text


def with_attachment(xml: bytes, name: str, content: bytes) -> bytes:
    root = etree.fromstring(xml)
    body = root.find("FatturaElettronicaBody")
    allegati = etree.SubElement(body, "Allegati")
    etree.SubElement(allegati, "NomeAttachment").text = name
    etree.SubElement(allegati, "FormatoAttachment").text = "TXT"
    etree.SubElement(allegati, "DescrizioneAttachment").text = "Delivery note"
    etree.SubElement(allegati, "Attachment").text = base64.b64encode(content).decode()
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def test_attachments_are_listed_and_decoded():
    xml = with_attachment(invoice_xml(), "ddt-42.txt", b"delivery note 42")
    document = read_document(xml)
    (attachment,) = document.bodies[0].attachments
    assert (attachment.name, attachment.content, attachment.index) == ("ddt-42.txt", b"delivery note 42", 1)
    text = squash(pdf_text(render_pdf(document, "x.xml")))
    assert "Allegati" in text and "ddt-42.txt" in text and "Delivery note" in text


def test_include_pdf_on_v2_detail_sent_and_received(client):
    supplier = premium(client)
    sent = upload(client, supplier)
    url = "/api/v2/invoices-out/detail"
    body = client.get(url, params={"id": sent.id, "includePdf": "true"}, headers=supplier.headers).json()
    assert sent.filename in pdf_text(base64.b64decode(body["pdfFile"]))
    plain = client.get(url, params={"id": sent.id}, headers=supplier.headers).json()
    assert plain["pdfFile"] is None
    got = received(supplier.account)
    body = client.get(
        "/api/v2/invoices-in/detail", params={"id": got.id, "includePdf": "True"}, headers=supplier.headers
    ).json()
    assert got.filename in pdf_text(base64.b64decode(body["pdfFile"]))
    bad = client.get(url, params={"id": sent.id, "includePdf": "maybe"}, headers=supplier.headers)
    assert bad.status_code == 400 and bad.json()["errorCode"] == "0002"


def test_a_file_of_thousands_of_lines_renders_a_bounded_copy():
    from varco.rendering.document import MAX_LINES

    root = etree.fromstring(invoice_xml())
    goods = root.find("FatturaElettronicaBody/DatiBeniServizi")
    line = goods.find("DettaglioLinee")
    for n in range(2, 3001):  # 3000 lines, the description long
        copy = etree.fromstring(etree.tostring(line))
        copy.find("NumeroLinea").text = str(n)
        copy.find("Descrizione").text = "X" * 1000
        goods.insert(goods.index(line) + n - 1, copy)
    total = len(goods.findall("DettaglioLinee"))
    document = read_document(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    [body] = document.bodies
    assert len(body.lines) == MAX_LINES and body.more_lines == total - MAX_LINES
    assert max(len(x.description) for x in body.lines) <= 200
    text = squash(pdf_text(render_pdf(document, "many-lines.xml")))
    assert f"e altre {total - MAX_LINES} righe: vedere il file XML" in text
