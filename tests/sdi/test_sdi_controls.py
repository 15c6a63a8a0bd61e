"""The simulated SDI applies the Exchange System's own controls (fatturapa.sdi_controls): an
invoice the intermediary accepts and the real SDI would refuse ends in 4 Scartata with an NS whose
ListaErrori carries the SDI's code, valid against MessaggiTypes v1.1, as the real SDI sends it."""

from __future__ import annotations

from lxml import etree

from tests.sdi.factories import (
    assert_valid_messages,
    invoice_file,
    notifications,
    state,
    supplier_account,
    types,
)
from tests.sdi.test_pipeline import upload
from varco.invoices.states import InvoiceState as S


def total_off_by(content: bytes, amount: str) -> bytes:
    """The first line's PrezzoTotale off by `amount` (the contract's rules do not look at it)."""
    root = etree.fromstring(content)
    total = root.find(".//DettaglioLinee/PrezzoTotale")
    total.text = f"{float(total.text) + float(amount):.2f}"
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def test_a_wrong_prezzo_totale_is_accepted_by_varco_and_refused_by_the_sdi_with_00423(client, queue):
    account = supplier_account()
    invoice = upload(client, account, total_off_by(invoice_file(supplier_vat=account.vat_code), "2.00"))
    assert invoice.state == S.PRESA_IN_CARICO  # the intermediary's answer does not change
    queue.drain()
    assert state(invoice.id) == S.SCARTATA
    assert types(invoice.id) == ["NS"]
    assert_valid_messages(invoice.id)
    [(_, ns)] = notifications(invoice.id)
    codes = [e.text for e in etree.fromstring(ns).iter("Codice")]
    assert "00423" in codes


def test_the_same_invoice_sent_twice_is_refused_the_second_time_with_00404(client, queue):
    account = supplier_account()
    content = invoice_file(supplier_vat=account.vat_code)
    first = upload(client, account, content)
    queue.drain()
    assert state(first.id) == S.CONSEGNATA
    again = etree.fromstring(content)  # the same invoice (supplier, type, number, date) in another file
    again.find(".//Causale").text = "copia"
    second = upload(client, account, etree.tostring(again, xml_declaration=True, encoding="UTF-8"))
    queue.drain()
    assert state(second.id) == S.SCARTATA
    [(_, ns)] = notifications(second.id)
    assert [e.text for e in etree.fromstring(ns).iter("Codice")] == ["00404"]
    assert state(first.id) == S.CONSEGNATA
