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


def test_an_invoice_refused_by_the_sdi_is_not_a_duplicate_when_its_corrected_copy_comes(client, queue):
    """The register of invoices the SDI took (00404) keeps only those of files it took: the
    invoices a refused file entered while it was checked are taken back with the refusal."""
    account = supplier_account()
    content = invoice_file(supplier_vat=account.vat_code)
    refused = upload(client, account, total_off_by(content, "2.00"))
    queue.drain()
    assert state(refused.id) == S.SCARTATA
    corrected = upload(client, account, content)  # the same supplier, type, number and date
    queue.drain()
    assert state(corrected.id) == S.CONSEGNATA
    assert types(corrected.id) == ["RC"]


def test_the_same_invoice_twice_in_one_batch_is_00409_only(client, queue):
    """The first body enters the invoice in the register; the second body's look-up finds it
    entered by the same file: the batch's duplicate (00409), not one sent before (00404)."""
    account = supplier_account()
    root = etree.fromstring(invoice_file(supplier_vat=account.vat_code))
    body = root.find("FatturaElettronicaBody")
    root.append(etree.fromstring(etree.tostring(body)))
    batch = upload(client, account, etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    queue.drain()
    assert state(batch.id) == S.SCARTATA
    [(_, ns)] = notifications(batch.id)
    assert [e.text for e in etree.fromstring(ns).iter("Codice")] == ["00409"]
