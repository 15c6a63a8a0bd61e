"""extract_summary: the figures search and the upload pipeline use."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from lxml import etree

from varco.fatturapa import BodySummary, Party, check_sync, extract_summary


def test_official_fpa03_two_bodies(samples_dir):
    summary = check_sync((samples_dir / "IT01234567890_FPA03.xml").read_bytes()).summary
    assert summary.format == "FPA12"
    assert (summary.transmitter_country, summary.transmitter_code) == ("IT", "01234567890")
    assert (summary.progressivo_invio, summary.codice_destinatario) == ("00001", "AAAAAA")
    assert summary.pec_destinatario is None and summary.soggetto_emittente is None
    assert summary.supplier == Party("ALPHA SRL", "IT", "01234567890", None)
    assert summary.customer == Party("AMMINISTRAZIONE BETA", "IT", None, "09876543210")
    assert summary.bodies == [
        BodySummary(
            "TD01", "12", date(2017, 1, 18), "EUR", Decimal("30.50"), Decimal("5.50"), Decimal("30.50")
        ),
        BodySummary(
            "TD01", "456", date(2017, 1, 20), "EUR", Decimal("2440.00"), Decimal("440.00"), Decimal("2440.00")
        ),
    ]


def test_official_samples_totals(samples_dir):
    expected = {
        "IT01234567890_FPA01.xml": [("6.10", "1.10", "6.10")],
        "IT01234567890_FPA02.xml": [("30.50", "5.50", "30.50")],
        "IT01234567890_FPR01.xml": [("6.10", "1.10", "6.10")],
        "IT01234567890_FPR03.xml": [("32.95", "5.95", "32.95"), ("2440.00", "440.00", "2440.00")],
    }
    for name, figures in expected.items():
        bodies = check_sync((samples_dir / name).read_bytes()).summary.bodies
        actual = [(str(b.total_document), str(b.total_vat), str(b.net_payable)) for b in bodies]
        assert actual == figures, name


def test_declared_total_wins_and_payments_give_net_payable(invoice):
    root = etree.fromstring(invoice("FPR12"))
    document = root.find("FatturaElettronicaBody/DatiGenerali/DatiGeneraliDocumento")
    total = etree.Element("ImportoTotaleDocumento")
    total.text = "7.00"
    document.find("Causale").addprevious(total)
    root.find("FatturaElettronicaBody/DatiPagamento/DettaglioPagamento/ImportoPagamento").text = "5.00"
    [body] = extract_summary(root, "FPR12").bodies
    assert (body.total_document, body.total_vat, body.net_payable) == (
        Decimal("7.00"),
        Decimal("1.10"),
        Decimal("5.00"),
    )


def test_without_payment_details_net_payable_is_the_total(invoice):
    root = etree.fromstring(invoice("FPR12"))
    body = root.find("FatturaElettronicaBody")
    body.remove(body.find("DatiPagamento"))
    assert extract_summary(root, "FPR12").bodies[0].net_payable == Decimal("6.10")


def test_party_names_from_person_and_fixture_vat_numbers(invoice):
    summary = check_sync(invoice("FSM10")).summary
    assert summary.supplier == Party("Mario Rossi", "IT", "01234560017", "RSSMRA84H04H501X")
    assert summary.customer == Party("ROSSI SPA", "IT", "09876540015", "09876540015")
    assert summary.pec_destinatario == "fatture55@pec.it"


def test_simplified_invoice_amounts_include_vat(invoice):
    root = etree.fromstring(invoice("FSM10"))
    goods = root.find("FatturaElettronicaBody/DatiBeniServizi")
    goods.find("Importo").text = "122.00"
    goods.find("DatiIVA/Aliquota").text = "22.00"
    second = etree.fromstring(etree.tostring(goods))
    second.find("Importo").text = "50.00"
    second.find("DatiIVA").clear()
    etree.SubElement(second.find("DatiIVA"), "Imposta").text = "4.55"
    goods.addnext(second)
    [body] = extract_summary(root, "FSM10").bodies
    assert (body.document_type, body.number, body.date) == ("TD07", "16", date(2022, 7, 16))
    assert (body.total_document, body.total_vat, body.net_payable) == (
        Decimal("172.00"),
        Decimal("26.55"),
        Decimal("172.00"),
    )
