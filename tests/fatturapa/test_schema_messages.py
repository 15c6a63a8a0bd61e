"""XSD failures in plain words (schema_messages): one test per kind of failure, on the example
invoices of examples/ broken the way developers break them; and a file that is not XML."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from varco.fatturapa import Finding, check_sync
from varco.fatturapa.schema import SCHEMAS, xsd_model
from varco.fatturapa.schema_messages import accepted_form

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LABEL = "FatturaPA 1.2.3 XSD"
ROOT = "/p:FatturaElettronica"
HEADER = f"{ROOT}/FatturaElettronicaHeader"
BODY = f"{ROOT}/FatturaElettronicaBody"
DOCUMENT = f"{BODY}/DatiGenerali/DatiGeneraliDocumento"
PAYMENT = f"{BODY}/DatiPagamento/DettaglioPagamento"
SUPPLIER = f"{HEADER}/CedentePrestatore"


def example(fmt: str = "FPR12") -> bytes:
    return (EXAMPLES / f"{fmt}.xml").read_bytes()


def edited(*edits: tuple[bytes, bytes], fmt: str = "FPR12") -> bytes:
    data = example(fmt)
    for old, new in edits:
        assert old in data, old
        data = data.replace(old, new, 1)
    return data


def line_of(data: bytes, marker: bytes) -> int:
    return data[: data.index(marker)].count(b"\n") + 1


def xsd_finding(data: bytes) -> Finding:
    """The one finding of a file that fails the XSD once."""
    report = check_sync(data)
    [finding] = report.errors
    assert finding.code == "0092" and finding.stage == "sync", finding
    assert finding.hint
    return finding


def test_the_examples_pass_the_xsd():
    for fmt in ("FPR12", "FPA12", "FSM10"):
        assert not [f for f in check_sync(example(fmt)).errors if f.code == "0092"]


# --- missing elements -------------------------------------------------------------------------


def test_a_deleted_element_is_missing_before_the_next_one_in_its_parent():
    data = edited((b"<Numero>2026/123</Numero>", b""))
    finding = xsd_finding(data)
    line = line_of(data, b"<DatiRitenuta>")
    assert finding.message == f"{LABEL}: line {line}: Numero is missing before DatiRitenuta in {DOCUMENT}"
    assert finding.xpath == DOCUMENT and finding.body == 1
    assert finding.hint == "Add Numero to DatiGeneraliDocumento, before DatiRitenuta."
    assert "not expected" not in finding.message


def test_a_missing_element_among_optional_ones_names_the_required_one():
    data = edited((b"<Descrizione>ARTICOLI DI CANCELLERIA</Descrizione>", b""))
    finding = xsd_finding(data)
    assert finding.message.endswith(
        f"Descrizione is missing before Quantita in {BODY}/DatiBeniServizi/DettaglioLinee[1]"
    )


def test_a_missing_last_element_is_missing_after_the_last_child():
    finding = xsd_finding(edited((b"<ImportoPagamento>266.08</ImportoPagamento>", b"")))
    assert finding.message.endswith(f"ImportoPagamento is missing in {PAYMENT}, after DataScadenzaPagamento")
    assert finding.xpath == PAYMENT


def test_a_missing_choice_names_both_alternatives():
    finding = xsd_finding(edited((b"<Denominazione>DITTA BETA</Denominazione>", b"")))
    anagrafica = f"{HEADER}/CessionarioCommittente/DatiAnagrafici/Anagrafica"
    assert finding.message.endswith(
        f"Denominazione or Nome is missing in {anagrafica} (it has no child elements)"
    )


# --- unexpected elements ------------------------------------------------------------------------


def test_a_misspelt_element_is_not_an_element_of_its_parent_with_a_guess():
    finding = xsd_finding(edited((b"<Numero>2026/123</Numero>", b"<Numro>2026/123</Numro>")))
    assert finding.message.endswith(
        f"Numro at {DOCUMENT}/Numro is not an element of DatiGeneraliDocumento (did you mean Numero?); "
        "expected here: Numero"
    )
    assert finding.xpath == f"{DOCUMENT}/Numro"


def test_an_unknown_element_lists_what_may_come_there():
    finding = xsd_finding(edited((b"</DatiPagamento>", b"</DatiPagamento><Note>x</Note>")))
    assert finding.message.endswith(
        f"Note at {BODY}/Note is not an element of FatturaElettronicaBody; "
        "expected here: DatiPagamento or Allegati"
    )


def test_a_repeated_element_is_repeated():
    finding = xsd_finding(edited((b"<Divisa>EUR</Divisa>", b"<Divisa>EUR</Divisa><Divisa>EUR</Divisa>")))
    assert finding.message.endswith(
        f"Divisa at {DOCUMENT}/Divisa[2] is repeated: DatiGeneraliDocumento takes only one Divisa"
    )
    assert finding.xpath == f"{DOCUMENT}/Divisa[2]"


def test_elements_out_of_order_say_which_comes_first():
    swapped = (
        b"<Divisa>EUR</Divisa>\n        <Data>2026-10-15</Data>",
        b"<Data>2026-10-15</Data>\n        <Divisa>EUR</Divisa>",
    )
    finding = xsd_finding(edited(swapped))
    assert finding.message.endswith(f"Data at {DOCUMENT}/Data is out of order: Divisa must come before it")
    moved = edited(
        (b"<Causale>FORNITURA DI BENI E SERVIZI OTTOBRE 2026</Causale>", b""),
        (b"<DatiRitenuta>", b"<Causale>FORNITURA</Causale><DatiRitenuta>"),
    )
    assert xsd_finding(moved).message.endswith(
        f"DatiRitenuta at {DOCUMENT}/DatiRitenuta is out of order: it must come before Causale"
    )


def test_an_inner_element_in_the_namespace_says_so():
    data = edited((b"<DatiGenerali>", b"<p:DatiGenerali>"), (b"</DatiGenerali>", b"</p:DatiGenerali>"))
    finding = xsd_finding(data)
    assert f"DatiGenerali at {BODY}/p:DatiGenerali is in the namespace http://" in finding.message
    assert "expected DatiGenerali without a namespace" in finding.message


def test_text_between_elements_is_quoted():
    finding = xsd_finding(edited((b"<Sede>", b"<Sede>VIALE ROMA")))
    assert finding.message.endswith(
        f"Sede at {SUPPLIER}/Sede holds the text 'VIALE ROMA' between its elements, but takes only elements"
    )


# --- wrong values: the accepted form per FatturaPA type -----------------------------------------


def test_an_amount_with_a_comma_says_dot_and_two_decimals():
    data = edited((b"<ImportoPagamento>266.08<", b"<ImportoPagamento>1,OO<"))
    finding = xsd_finding(data)
    line = line_of(data, b"<ImportoPagamento>")
    assert finding.message == (
        f"{LABEL}: line {line}: ImportoPagamento at {PAYMENT}/ImportoPagamento: '1,OO' is not valid; "
        "expected a number with a dot and exactly 2 decimals (at most 11 digits before the dot, - for a "
        "negative amount), e.g. 1220.00"
    )
    assert "Amount2DecimalType" not in finding.message
    assert finding.xpath == f"{PAYMENT}/ImportoPagamento" and finding.body == 1
    assert "dot" in finding.hint


def test_an_amount_of_up_to_8_decimals_and_a_quantity():
    price = xsd_finding(edited((b"<PrezzoUnitario>55.00<", b"<PrezzoUnitario>55<")))
    assert "'55' is not accepted; expected a number with a dot and 2 to 8 decimals" in price.message
    assert price.xpath == f"{BODY}/DatiBeniServizi/DettaglioLinee[2]/PrezzoUnitario"
    quantity = xsd_finding(edited((b"<Quantita>5.00<", b"<Quantita>5<")))
    assert "'5' is not accepted; expected a quantity with a dot and 2 to 8 decimals" in quantity.message


def test_a_rate_says_percentage_and_its_maximum():
    finding = xsd_finding(edited((b"<AliquotaRitenuta>20.00<", b"<AliquotaRitenuta>120.00<")))
    assert finding.message.endswith(
        f"AliquotaRitenuta at {DOCUMENT}/DatiRitenuta/AliquotaRitenuta: '120.00' is more than the maximum, "
        "100.00; expected a percentage from 0.00 to 100.00 with a dot and exactly 2 decimals, e.g. 22.00"
    )
    whole = xsd_finding(edited((b"<AliquotaIVA>22.00<", b"<AliquotaIVA>22<")))
    assert "'22' is not accepted; expected a percentage from 0.00 to 100.00" in whole.message
    assert "0.22" in whole.hint


def test_a_date_written_the_italian_way_says_yyyy_mm_dd():
    finding = xsd_finding(edited((b"<Data>2026-10-15<", b"<Data>18/12/2014<")))
    assert finding.message.endswith(
        f"Data at {DOCUMENT}/Data: '18/12/2014' is not valid; expected a date written YYYY-MM-DD, "
        "not before 1970-01-01, e.g. 2024-12-18"
    )
    assert "DataFatturaType" not in finding.message
    assert "18/12/2024" in finding.hint
    due = xsd_finding(edited((b"<DataScadenzaPagamento>2026-11-15<", b"<DataScadenzaPagamento>2026-13-15<")))
    assert "'2026-13-15' is not valid; expected a date written YYYY-MM-DD, e.g. 2024-12-18" in due.message
    assert "xs:date" not in due.message
    empty = xsd_finding(edited((b"<Data>2026-10-15<", b"<Data><")))
    assert f"Data at {DOCUMENT}/Data: the value is empty; expected a date" in empty.message


def test_an_enumeration_lists_the_accepted_values():
    finding = xsd_finding(edited((b"<TipoDocumento>TD01<", b"<TipoDocumento>TD99<")))
    assert finding.message.endswith(
        f"TipoDocumento at {DOCUMENT}/TipoDocumento: 'TD99' is not an accepted value; expected one of "
        "TD01, TD02, TD03, TD04, TD05, TD06, TD16, TD17, TD18, TD19, TD20, TD21, TD22, TD23, TD24, TD25, "
        "TD26, TD27, TD28, TD29"
    )


def test_a_value_failing_length_and_enumeration_is_one_finding_with_a_guess():
    # libxml2 reports [facet 'length'] and [facet 'enumeration'] for MP5: one finding
    finding = xsd_finding(edited((b"<ModalitaPagamento>MP05<", b"<ModalitaPagamento>MP5<")))
    assert f"ModalitaPagamento at {PAYMENT}/ModalitaPagamento: 'MP5' is not an accepted value " in (
        finding.message
    )
    assert "(did you mean MP05?); expected one of MP01, MP02," in finding.message


def test_lengths_say_how_many_characters():
    progressivo = xsd_finding(edited((b"<ProgressivoInvio>00001<", b"<ProgressivoInvio>00000000001<")))
    assert progressivo.message.endswith(
        f"ProgressivoInvio at {HEADER}/DatiTrasmissione/ProgressivoInvio: '00000000001' has 11 characters, "
        "more than 10; expected 1 to 10 ASCII characters (no accented letters, no symbols such as €)"
    )
    id_codice = f"{SUPPLIER}/DatiAnagrafici/IdFiscaleIVA/IdCodice"
    too_long = xsd_finding(edited((b"<IdCodice>01234560017<", b"<IdCodice>" + b"1" * 30 + b"<")))
    assert f"IdCodice at {id_codice}: '{'1' * 30}' has 30 characters, more than 28; expected 1 to 28" in (
        too_long.message
    )
    empty = xsd_finding(edited((b"<IdCodice>01234560017<", b"<IdCodice><")))
    assert f"IdCodice at {id_codice}: the value is empty; expected 1 to 28 characters" in empty.message
    name = xsd_finding(edited((b"<Denominazione>DITTA BETA<", b"<Denominazione>" + b"X" * 90 + b"<")))
    assert f"'{'X' * 40}...' has 90 characters, more than 80; expected 1 to 80 Latin-1 characters" in (
        name.message
    )


def test_a_character_beyond_latin_1_is_named():
    data = edited((b"<Denominazione>DITTA BETA<", "<Denominazione>DITTA BETA €<".encode()))
    finding = xsd_finding(data)
    assert (
        "'DITTA BETA €' contains '€', which is not a Latin-1 character; expected 1 to 80" in finding.message
    )
    assert "€ as EUR" in finding.hint


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        (
            b"<CodiceDestinatario>ABC1234<",
            b"<CodiceDestinatario>abc<",
            "'abc' has 3 characters, fewer than 6; expected 6 or 7 capital letters or digits: a public "
            "office's 6-character code (e.g. UFY9MH), otherwise the recipient's 7-character SDI code",
        ),
        (b"<CAP>07100<", b"<CAP>7100<", "'7100' is not accepted; expected 5 digits, an Italian postcode"),
        (
            b"<Provincia>SS<",
            b"<Provincia>Sassari<",
            "'Sassari' has 7 characters, more than 2; expected 2 capital letters, an Italian province",
        ),
        (b"<Provincia>SS<", b"<Provincia>ss<", "'ss' is not accepted (did you mean SS?); expected 2 capital"),
        (
            b"<Nazione>IT<",
            b"<Nazione>ITA<",
            "'ITA' has 3 characters, more than 2; expected 2 capital letters, an ISO 3166-1 alpha-2 country "
            "code, e.g. IT",
        ),
        (b"<Divisa>EUR<", b"<Divisa>eur<", "'eur' is not accepted (did you mean EUR?); expected 3 capital"),
    ],
)
def test_codes_say_their_shape_with_an_example(old, new, fragment):
    finding = xsd_finding(edited((old, new)))
    assert fragment in finding.message
    element = new[1 : new.index(b">")].decode()
    assert f"{element} at {ROOT}/" in finding.message and finding.xpath.endswith(f"/{element}")


def test_the_simplified_format_words_its_own_types():
    finding = xsd_finding(
        edited((b"<CodiceDestinatario>0000000<", b"<CodiceDestinatario>UFY9MH<"), fmt="FSM10")
    )
    assert finding.message.startswith("FatturaPA semplificata FSM10 1.0.2 XSD: line ")
    assert "'UFY9MH' has 6 characters, fewer than 7; expected 7 capital letters or digits" in finding.message
    amount = xsd_finding(edited((b"<Importo>122.00<", b"<Importo>122,00<"), fmt="FSM10"))
    assert "'122,00' is not valid; expected a number with a dot and exactly 2 decimals" in amount.message


# --- attributes --------------------------------------------------------------------------------


def test_attributes_wrong_missing_or_unknown():
    wrong = xsd_finding(edited((b'versione="FPR12"', b'versione="FPR13"')))
    assert wrong.message.endswith(
        f"attribute versione of FatturaElettronica at {ROOT}: 'FPR13' is not an accepted value; "
        "expected one of FPA12, FPR12"
    )
    missing = xsd_finding(edited((b' versione="FPR12"', b"")))
    assert missing.message.endswith(
        f"FatturaElettronica at {ROOT} lacks the required attribute versione (one of FPA12, FPR12)"
    )
    unknown = xsd_finding(edited((b"<Divisa>", b'<Divisa valuta="1">')))
    assert unknown.message.endswith(f"attribute valuta is not allowed on Divisa at {DOCUMENT}/Divisa")


# --- every type has plain words ----------------------------------------------------------------


def test_every_simple_type_of_both_schemas_is_worded_without_its_pattern():
    for spec in SCHEMAS.values():
        model = xsd_model(spec.file)
        used = {c.type for children in model.children.values() for c in children.values()}
        for name in sorted(set(model.simple) | {t for t in used if t.startswith("xs:")}):
            form = accepted_form(model.simple_type(name)).text
            assert form != "text" and "pattern" not in form and "Type" not in form, (spec.file, name, form)


def test_many_errors_keep_one_finding_each_in_order():
    data = edited(
        (b"<CAP>07100<", b"<CAP>7100<"),
        (b"<Data>2026-10-15<", b"<Data>15/10/2026<"),
        (b"<ImportoPagamento>266.08<", b"<ImportoPagamento>266,08<"),
    )
    findings = check_sync(data).errors
    assert [f.xpath.rsplit("/", 1)[1] for f in findings] == ["CAP", "Data", "ImportoPagamento"]
    assert [f.body for f in findings] == [None, 1, 1]


# --- not XML -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b"Fattura n. 123 del 18/12/2014",
            "The file is not XML: it starts with 'Fattura n. 123 del 18/12'",
        ),
        (b"\x00\x01\x02\x03 binary", "The file is not XML: its first bytes are 00 01 02 03 20 62 69 6e"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "The file is not XML: it looks like a PDF document"),
        (b'{"dataFile": "PD94bWwg"}', "The file is not XML: it looks like JSON"),
    ],
)
def test_a_file_that_is_not_xml_is_said_to_be_not_xml(data, message):
    report = check_sync(data)
    [finding] = report.errors
    assert (finding.code, finding.message) == ("0092", message)
    assert "FatturaPA XML" in finding.hint
    assert "base64" not in finding.message.lower()


def test_base64_of_a_file_that_is_not_xml_is_not_xml_either():
    [finding] = check_sync(base64.b64encode(b"Fattura n. 123 del 18/12/2014")).errors
    assert finding.code == "0092"
    assert finding.message.startswith("The file is not XML, and decoded as base64 text it is neither XML nor")
    assert finding.message.endswith("it starts with 'Fattura n. 123 del 18/12'")


def test_base64_broken_further_on_is_still_0098():
    encoded = base64.b64encode(example())
    [finding] = check_sync(encoded[:200] + b"*" + encoded[200:]).errors
    assert finding.code == "0098"
    assert "character b'*' at offset 200 is not base64" in finding.message
