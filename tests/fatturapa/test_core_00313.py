"""00313 (synchronous, under 0096): CodiceDestinatario XXXXXXX only for non-resident clients."""

from __future__ import annotations

from varco.fatturapa import CheckOptions, check_sync

CODE = "FatturaElettronicaHeader/DatiTrasmissione/CodiceDestinatario"
CLIENT_ID = "FatturaElettronicaHeader/CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA"
SIMPLIFIED_CLIENT_ID = "FatturaElettronicaHeader/CessionarioCommittente/IdentificativiFiscali/IdFiscaleIVA"


def test_xxxxxxx_with_an_italian_client_is_00313(invoice):
    report = check_sync(invoice("FPR12", {CODE: "XXXXXXX"}))
    [finding] = report.errors
    assert finding.code == "00313"
    assert finding.stage == "sync"
    assert "XXXXXXX" in finding.message and "IdPaese> is IT" in finding.message
    assert finding.xpath.endswith("/CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA/IdPaese")
    assert finding.hint
    assert finding.upload_text.startswith("00313 - 1.1.4 <CodiceDestinatario> is XXXXXXX")


def test_xxxxxxx_without_the_client_vat_id_is_00313(invoice):
    [finding] = check_sync(invoice("FPR12", {CODE: "XXXXXXX", CLIENT_ID: None})).errors
    assert finding.code == "00313"
    assert "no 1.4.1.1 <IdFiscaleIVA>" in finding.message
    assert finding.xpath.endswith("/DatiTrasmissione/CodiceDestinatario")


def test_xxxxxxx_with_a_foreign_client_vat_id_passes(invoice):
    data = invoice(
        "FPR12",
        {CODE: "XXXXXXX", f"{CLIENT_ID}/IdPaese": "FR", f"{CLIENT_ID}/IdCodice": "12345678901"},
    )
    assert check_sync(data).accepted


def test_other_recipient_codes_are_not_concerned(invoice):
    assert check_sync(invoice("FPR12", {CODE: "0000000", CLIENT_ID: None})).accepted


def test_skip_extra_schema_skips_00313(invoice):
    assert check_sync(invoice("FPR12", {CODE: "XXXXXXX"}), CheckOptions(skip_extra_schema=True)).accepted


def test_simplified_invoice_variant_uses_1_3_1_1(invoice):
    [finding] = check_sync(invoice("FSM10", {CODE: "XXXXXXX"})).errors
    assert finding.code == "00313" and "1.3.1.1.1 <IdPaese> is IT" in finding.message
    data = invoice("FSM10", {CODE: "XXXXXXX", f"{SIMPLIFIED_CLIENT_ID}/IdPaese": "DE"})
    assert check_sync(data).accepted
