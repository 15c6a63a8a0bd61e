"""§1 issuer rules (0093) and senderPIVA (0002)."""

from __future__ import annotations

from lxml import etree

from tests.fatturapa.core_support import CLIENT_VAT, SUPPLIER_VAT
from varco.fatturapa import CheckOptions, check_sync

HEADER = "FatturaElettronicaHeader"
EMITTER = f"{HEADER}/SoggettoEmittente"
KIND = "FatturaElettronicaBody/DatiGenerali/DatiGeneraliDocumento/TipoDocumento"
CLIENT_ID = f"{HEADER}/CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA"


def _errors(data, **options):
    return check_sync(data, CheckOptions(**options)).errors


def test_without_1_6_the_account_must_be_the_supplier(invoice):
    assert _errors(invoice("FPR12"), account_vat=SUPPLIER_VAT) == []
    [finding] = _errors(invoice("FPR12"), account_vat=CLIENT_VAT)
    assert finding.code == "0093"
    assert CLIENT_VAT in finding.message and SUPPLIER_VAT in finding.message
    assert "1.2.1.1" in finding.message
    assert finding.xpath.endswith("/CedentePrestatore/DatiAnagrafici/IdFiscaleIVA")
    assert finding.hint


def test_a_bare_italian_vat_number_names_the_account(invoice):
    assert _errors(invoice("FPR12"), account_vat="01234560017") == []


def test_self_billing_cc_requires_the_account_to_be_the_client(invoice):
    data = invoice("FPR12", {EMITTER: "CC"})
    assert _errors(data, account_vat=CLIENT_VAT) == []
    [finding] = _errors(data, account_vat=SUPPLIER_VAT)
    assert finding.code == "0093"
    assert "1.4.1.1" in finding.message and CLIENT_VAT in finding.message
    assert finding.xpath.endswith("/CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA")


def test_self_billing_without_a_client_vat_number_is_0093(invoice):
    data = invoice("FPR12", {EMITTER: "CC", CLIENT_ID: None})
    [finding] = _errors(data, account_vat=CLIENT_VAT)
    assert finding.code == "0093" and "absent" in finding.message


def test_third_party_emitter_tz_is_refused_even_without_an_account(invoice):
    data = invoice("FPR12", {EMITTER: "TZ"})
    for options in ({}, {"account_vat": SUPPLIER_VAT}):
        [finding] = _errors(data, **options)
        assert finding.code == "0093"
        assert "TZ" in finding.message
        assert finding.xpath.endswith("/SoggettoEmittente")


def test_self_billing_document_type_must_be_allowed_per_body(invoice):
    root = etree.fromstring(invoice("FPR12", {EMITTER: "CC"}))
    second = etree.fromstring(etree.tostring(root.find("FatturaElettronicaBody")))
    second.find("DatiGenerali/DatiGeneraliDocumento/TipoDocumento").text = "TD04"
    root.append(second)
    [finding] = _errors(etree.tostring(root))
    assert finding.code == "0093"
    assert finding.body == 2
    assert "TD04" in finding.message and "TD01, TD16" in finding.message
    assert finding.xpath.endswith(
        "FatturaElettronicaBody[2]/DatiGenerali/DatiGeneraliDocumento/TipoDocumento"
    )


def test_every_listed_self_billing_type_is_allowed(invoice):
    for kind in ("TD01", "TD16", "TD17", "TD18", "TD19", "TD20", "TD21", "TD22", "TD23", "TD26", "TD27"):
        assert _errors(invoice("FPR12", {EMITTER: "CC", KIND: kind})) == [], kind
    assert [f.code for f in _errors(invoice("FPR12", {EMITTER: "CC", KIND: "TD24"}))] == ["0093"]


def test_sender_piva_of_the_wrong_shape_is_0002(invoice):
    data = invoice("FPR12", {KIND: "TD26"})
    for sender in ("01234560017", "it01234560017", "IT0123456001A", "I01234560017"):
        [finding] = _errors(data, sender_piva=sender)
        assert finding.code == "0002", sender
        assert "two letters followed by digits" in finding.message


def test_sender_piva_is_only_for_td26(invoice):
    [finding] = _errors(invoice("FPR12"), sender_piva=SUPPLIER_VAT)
    assert finding.code == "0002"
    assert "TD26" in finding.message and "TD01" in finding.message
    assert finding.body == 1 and finding.xpath.endswith("/TipoDocumento")


def test_sender_piva_decides_whose_vat_the_issuer_rule_uses(invoice):
    data = invoice("FPR12", {KIND: "TD26"})
    assert _errors(data, sender_piva=CLIENT_VAT, account_vat=CLIENT_VAT) == []
    assert _errors(data, sender_piva=SUPPLIER_VAT, account_vat=SUPPLIER_VAT) == []
    [finding] = _errors(data, sender_piva=CLIENT_VAT, account_vat=SUPPLIER_VAT)
    assert finding.code == "0093" and "senderPIVA" in finding.message


def test_sender_piva_must_be_the_supplier_or_the_client(invoice):
    [finding] = _errors(invoice("FPR12", {KIND: "TD26"}), sender_piva="IT11111111111")
    assert finding.code == "0002"
    assert SUPPLIER_VAT in finding.message and CLIENT_VAT in finding.message


def test_simplified_invoice_issuer_rules(invoice):
    assert _errors(invoice("FSM10"), account_vat=SUPPLIER_VAT) == []
    [finding] = _errors(invoice("FSM10"), account_vat=CLIENT_VAT)
    assert finding.code == "0093" and finding.xpath.endswith("/CedentePrestatore/IdFiscaleIVA")
    # §1's self-billing list has no simplified type (TD07-TD09): a CC simplified invoice is refused.
    [finding] = _errors(invoice("FSM10", {EMITTER: "CC"}), account_vat=CLIENT_VAT)
    assert finding.code == "0093" and "1.4 <SoggettoEmittente> CC" in finding.message
