"""0094: 1.1.1 IdTrasmittente and 1.1.5 ContattiTrasmittente must be the intermediary's."""

from __future__ import annotations

from tests.fatturapa.core_support import TRANSMITTER_CONTACTS, TRANSMITTER_ID
from varco.fatturapa import CheckOptions, check_sync

TRANSMISSION = "FatturaElettronicaHeader/DatiTrasmissione"
CONTACTS = f"{TRANSMISSION}/ContattiTrasmittente"


def _codes(report):
    return [f.code for f in report.errors]


def test_matching_transmitter_and_contacts_pass(invoice):
    options = CheckOptions(transmitter_id=TRANSMITTER_ID, transmitter_contacts=TRANSMITTER_CONTACTS)
    assert check_sync(invoice("FPR12"), options).accepted


def test_wrong_transmitter_id_is_0094(invoice):
    data = invoice("FPR12", {f"{TRANSMISSION}/IdTrasmittente/IdCodice": "01234560017"})
    report = check_sync(data, CheckOptions(transmitter_id=TRANSMITTER_ID))
    [finding] = report.errors
    assert finding.code == "0094"
    assert "IT01234560017" in finding.message and "IT05555550028" in finding.message
    assert finding.xpath == "/p:FatturaElettronica/FatturaElettronicaHeader/DatiTrasmissione/IdTrasmittente"
    assert "IdCodice 05555550028" in finding.hint


def test_wrong_transmitter_country_is_0094(invoice):
    data = invoice("FPR12", {f"{TRANSMISSION}/IdTrasmittente/IdPaese": "SM"})
    assert _codes(check_sync(data, CheckOptions(transmitter_id=TRANSMITTER_ID))) == ["0094"]


def test_transmitter_check_is_skipped_without_a_configured_id(invoice):
    data = invoice("FPR12", {f"{TRANSMISSION}/IdTrasmittente/IdCodice": "01234560017"})
    assert check_sync(data, CheckOptions()).accepted


def test_contacts_mismatch_is_0094_naming_the_field(invoice):
    data = invoice("FPR12", {f"{CONTACTS}/Email": "other@example.com"})
    options = CheckOptions(transmitter_id=TRANSMITTER_ID, transmitter_contacts=TRANSMITTER_CONTACTS)
    [finding] = check_sync(data, options).errors
    assert finding.code == "0094"
    assert "<Email>" in finding.message and "other@example.com" in finding.message
    assert "sdi@varco.example" in finding.message
    assert finding.xpath.endswith("/ContattiTrasmittente/Email")


def test_email_comparison_ignores_case(invoice):
    data = invoice("FPR12", {f"{CONTACTS}/Email": "SDI@Varco.Example"})
    options = CheckOptions(transmitter_id=TRANSMITTER_ID, transmitter_contacts=TRANSMITTER_CONTACTS)
    assert check_sync(data, options).accepted


def test_absent_contacts_are_0094_once_per_configured_field(invoice):
    data = invoice("FPR12", {CONTACTS: None})
    options = CheckOptions(transmitter_id=TRANSMITTER_ID, transmitter_contacts=TRANSMITTER_CONTACTS)
    report = check_sync(data, options)
    assert _codes(report) == ["0094", "0094"]
    assert "<Telefono> is absent" in report.errors[0].message
    assert "<Email> is absent" in report.errors[1].message


def test_only_the_configured_contact_is_checked(invoice):
    data = invoice("FPR12", {f"{CONTACTS}/Telefono": "0000000"})
    options = CheckOptions(transmitter_id=TRANSMITTER_ID, transmitter_contacts=(None, "sdi@varco.example"))
    assert check_sync(data, options).accepted


def test_simplified_invoice_has_no_contacts_block_so_only_the_id_is_checked(invoice):
    options = CheckOptions(transmitter_id=TRANSMITTER_ID, transmitter_contacts=TRANSMITTER_CONTACTS)
    assert check_sync(invoice("FSM10"), options).accepted
    data = invoice("FSM10", {f"{TRANSMISSION}/IdTrasmittente/IdCodice": "01234560017"})
    assert _codes(check_sync(data, options)) == ["0094"]


def test_0094_comes_before_issuer_and_00313(invoice):
    data = invoice(
        "FPR12",
        {
            f"{TRANSMISSION}/IdTrasmittente/IdCodice": "01234560017",
            f"{TRANSMISSION}/CodiceDestinatario": "XXXXXXX",
            "FatturaElettronicaHeader/SoggettoEmittente": "TZ",
        },
    )
    assert _codes(check_sync(data, CheckOptions(transmitter_id=TRANSMITTER_ID))) == ["0094"]
