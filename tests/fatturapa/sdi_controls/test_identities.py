"""SDI controls on identities: 00300-00304 (transmitter, supplier, fiscal representatives) and 00330
(PECDestinatario of the SDI itself). Each control: a failing invoice and its passing twin."""

from __future__ import annotations

import pytest
from lxml import etree
from stdnum import luhn
from stdnum.it import codicefiscale, iva

from tests.fatturapa.sdi_controls.support import BASES, base, edited, sdi_findings
from varco.fatturapa.findings import Finding
from varco.fatturapa.sdi_controls import CONTROLS
from varco.fatturapa.sdi_controls.registry import controls_for

MINE = {"00300", "00301", "00302", "00303", "00304", "00330"}
APPROXIMATED = {"00300", "00301", "00302", "00303", "00304"}
ORDINARY_KINDS = ["FPR12", "FPA12"]
ALL_KINDS = ["FPR12", "FPA12", "FSM10"]

HEADER = "FatturaElettronicaHeader"
TRANSMISSION = f"{HEADER}/DatiTrasmissione"
TRANSMITTER = f"{TRANSMISSION}/IdTrasmittente"


def vat_number(first_ten: str) -> str:
    """An Italian VAT number with its right check digit (Luhn)."""
    return first_ten + luhn.calc_check_digit(first_ten)


def wrong_check(code: str) -> str:
    """The same code with a wrong last character (digit or letter)."""
    last = code[-1]
    replacement = str((int(last) + 1) % 10) if last.isdigit() else ("A" if last != "A" else "B")
    return code[:-1] + replacement


VALID_VAT = vat_number("0765432100")
BAD_VAT = wrong_check(VALID_VAT)
VALID_PERSON = "BNCLRA85T41F205" + codicefiscale.calc_check_digit("BNCLRA85T41F205")
BAD_PERSON = wrong_check(VALID_PERSON)


def identity_findings(root: etree._Element) -> list[Finding]:
    """The findings of this module's controls (after checking the edit kept the file XSD-valid)."""
    findings = sdi_findings(root)
    assert not [f for f in findings if f.code in {"00200", "00201"}], [f.message for f in findings]
    return [f for f in findings if f.code in MINE]


def only(root: etree._Element, code: str) -> Finding:
    """The one finding of the module on `root`, which must carry `code`."""
    findings = identity_findings(root)
    assert [f.code for f in findings] == [code], [f.message for f in findings]
    finding = findings[0]
    assert finding.stage == "sdi"
    assert ("(approximated offline" in finding.message) is (code in APPROXIMATED)
    return finding


def passes(root: etree._Element) -> None:
    findings = identity_findings(root)
    assert findings == [], [f.message for f in findings]


def set_text(path: str, value: str):  # noqa: ANN201
    def edit(root: etree._Element) -> None:
        root.find(path).text = value

    return edit


def snippet(xml: str) -> etree._Element:
    return etree.fromstring(xml)


def id_fiscale(country: str, code: str) -> str:
    return f"<IdFiscaleIVA><IdPaese>{country}</IdPaese><IdCodice>{code}</IdCodice></IdFiscaleIVA>"


def short_representative(code: str) -> etree._Element:
    """A RappresentanteFiscale holding IdFiscaleIVA (IT) and a name: the client's (1.4.4) and the
    simplified format's."""
    return snippet(
        f"<RappresentanteFiscale>{id_fiscale('IT', code)}<Denominazione>RAPP SRL</Denominazione>"
        "</RappresentanteFiscale>"
    )


# -- registry -----------------------------------------------------------------------------------


def test_controls_are_registered_with_their_formats_and_approximation() -> None:
    specs = [spec for spec in CONTROLS if spec.code in MINE]
    assert {spec.code for spec in specs} == MINE
    for spec in specs:
        assert spec.approximated is (spec.code in APPROXIMATED), spec.code
        assert spec.hint and "\n" not in spec.hint
    assert {spec.code for spec in controls_for("FSM10")} & MINE == MINE - {"00304"}
    for fmt in ORDINARY_KINDS:
        assert {spec.code for spec in controls_for(fmt)} & MINE == MINE


def test_no_00311_control_all_its_offline_part_is_xsd_and_contract() -> None:
    assert "00311" not in {spec.code for spec in CONTROLS}


@pytest.mark.parametrize("kind", sorted(BASES))
def test_every_base_passes_every_identity_control(kind: str) -> None:
    passes(base(kind))


# -- 00300 transmitter --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_00300_transmitter_vat_number_with_wrong_check_digit(kind: str) -> None:
    finding = only(edited(kind, set_text(f"{TRANSMITTER}/IdCodice", BAD_VAT)), "00300")
    assert finding.message.startswith(f"1.1.1.2 IdCodice {BAD_VAT} of the transmitter (IdPaese IT, XML line ")
    assert "11 digits with a valid check digit" in finding.message
    assert finding.xpath.endswith("/DatiTrasmissione/IdTrasmittente/IdCodice")
    passes(edited(kind, set_text(f"{TRANSMITTER}/IdCodice", VALID_VAT)))


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_00300_transmitter_may_be_a_person(kind: str) -> None:
    passes(edited(kind, set_text(f"{TRANSMITTER}/IdCodice", VALID_PERSON)))
    finding = only(edited(kind, set_text(f"{TRANSMITTER}/IdCodice", BAD_PERSON)), "00300")
    assert f"IdCodice {BAD_PERSON} " in finding.message
    assert "16-character personal tax code" in finding.message


def test_00300_transmitter_personal_tax_code_in_lowercase() -> None:
    finding = only(edited("FPR12", set_text(f"{TRANSMITTER}/IdCodice", VALID_PERSON.lower())), "00300")
    assert "16 capital letters and digits" in finding.message


@pytest.mark.parametrize("code", ["123456789", "IT" + VALID_VAT, "0765 432100X"])
def test_00300_transmitter_italian_code_of_another_shape(code: str) -> None:
    finding = only(edited("FPR12", set_text(f"{TRANSMITTER}/IdCodice", code)), "00300")
    assert "is neither an Italian VAT number" in finding.message


def test_00300_foreign_transmitter_is_checked_for_shape_only() -> None:
    def foreign(code: str):  # noqa: ANN202
        def edit(root: etree._Element) -> None:
            root.find(f"{TRANSMITTER}/IdPaese").text = "DE"
            root.find(f"{TRANSMITTER}/IdCodice").text = code

        return edit

    passes(edited("FPR12", foreign("ABC123")))  # not a valid German VAT number: shape only
    finding = only(edited("FSM10", foreign("AB 12")), "00300")
    assert "IdCodice 'AB 12' of the transmitter (IdPaese DE" in finding.message
    assert "one word" in finding.message


# -- 00301 supplier's IdCodice ------------------------------------------------------------------

SUPPLIER_VAT = {
    "FPR12": f"{HEADER}/CedentePrestatore/DatiAnagrafici/IdFiscaleIVA",
    "FPA12": f"{HEADER}/CedentePrestatore/DatiAnagrafici/IdFiscaleIVA",
    "FSM10": f"{HEADER}/CedentePrestatore/IdFiscaleIVA",
}
SUPPLIER_CODE_NUMBER = {"FPR12": "1.2.1.1.2", "FPA12": "1.2.1.1.2", "FSM10": "1.2.1.2"}


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_00301_supplier_vat_number_with_wrong_check_digit(kind: str) -> None:
    finding = only(edited(kind, set_text(f"{SUPPLIER_VAT[kind]}/IdCodice", BAD_VAT)), "00301")
    number = SUPPLIER_CODE_NUMBER[kind]
    assert finding.message.startswith(f"{number} IdCodice {BAD_VAT} of the supplier (IdPaese IT, XML line ")
    assert "is not an Italian VAT number (11 digits with a valid check digit)" in finding.message
    passes(edited(kind, set_text(f"{SUPPLIER_VAT[kind]}/IdCodice", VALID_VAT)))


@pytest.mark.parametrize("kind", ["FPR12", "FSM10"])
def test_00301_foreign_supplier_vat_number(kind: str) -> None:
    def german(code: str):  # noqa: ANN202
        def edit(root: etree._Element) -> None:
            root.find(f"{SUPPLIER_VAT[kind]}/IdPaese").text = "DE"
            root.find(f"{SUPPLIER_VAT[kind]}/IdCodice").text = code

        return edit

    assert "00301" in {f.code for f in identity_findings(edited(kind, german("136695970")))}
    assert "00301" not in {f.code for f in identity_findings(edited(kind, german("136695976")))}


# -- 00302 supplier's CodiceFiscale -------------------------------------------------------------


def with_supplier_tax_code(kind: str, code: str) -> etree._Element:
    def edit(root: etree._Element) -> None:
        existing = root.find(f"{SUPPLIER_VAT[kind]}/../CodiceFiscale")
        if existing is None:
            existing = etree.Element("CodiceFiscale")
            root.find(SUPPLIER_VAT[kind]).addnext(existing)
        existing.text = code

    return edited(kind, edit)


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize("bad", [BAD_PERSON, BAD_VAT, "ABCDEFGHIJKLM"])
def test_00302_supplier_tax_code_invalid(kind: str, bad: str) -> None:
    finding = only(with_supplier_tax_code(kind, bad), "00302")
    number = "1.2.2" if kind == "FSM10" else "1.2.1.2"
    assert finding.message.startswith(f"{number} CodiceFiscale {bad} of the supplier (XML line ")
    assert finding.xpath.endswith("/CodiceFiscale")


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize("good", [VALID_PERSON, VALID_VAT])
def test_00302_supplier_tax_code_valid(kind: str, good: str) -> None:
    passes(with_supplier_tax_code(kind, good))


# -- 00303 / 00304 fiscal representatives --------------------------------------------------------


def with_representative(kind: str, whose: str, code: str, tax_code: str | None = None) -> etree._Element:
    """`kind` with a fiscal representative of the supplier or of the client, IdPaese IT."""

    def edit(root: etree._Element) -> None:
        header = root.find(HEADER)
        if kind == "FSM10":
            block = short_representative(code)
            if whose == "supplier":
                header.find("CedentePrestatore/RegimeFiscale").addprevious(block)
            else:
                header.find("CessionarioCommittente/AltriDatiIdentificativi").append(block)
        elif whose == "supplier":
            tax = f"<CodiceFiscale>{tax_code}</CodiceFiscale>" if tax_code else ""
            header.find("CedentePrestatore").addnext(
                snippet(
                    f"<RappresentanteFiscale><DatiAnagrafici>{id_fiscale('IT', code)}{tax}<Anagrafica>"
                    "<Denominazione>RAPP SRL</Denominazione></Anagrafica></DatiAnagrafici>"
                    "</RappresentanteFiscale>"
                )
            )
        else:
            header.find("CessionarioCommittente").append(short_representative(code))

    return edited(kind, edit)


REPRESENTATIVES = [
    ("FPR12", "supplier", "1.3.1.1.2"),
    ("FPA12", "supplier", "1.3.1.1.2"),
    ("FPR12", "client", "1.4.4.1.2"),
    ("FPA12", "client", "1.4.4.1.2"),
    ("FSM10", "supplier", "1.2.8.1.2"),
    ("FSM10", "client", "1.3.2.6.1.2"),
]


@pytest.mark.parametrize(("kind", "whose", "number"), REPRESENTATIVES)
def test_00303_representative_vat_number(kind: str, whose: str, number: str) -> None:
    finding = only(with_representative(kind, whose, BAD_VAT), "00303")
    assert finding.message.startswith(
        f"{number} IdCodice {BAD_VAT} of the {whose}'s fiscal representative (IdPaese IT, XML line "
    )
    assert "RappresentanteFiscale" in finding.xpath
    passes(with_representative(kind, whose, VALID_VAT))


def test_00303_both_representatives_are_reported() -> None:
    root = with_representative("FPR12", "supplier", BAD_VAT)
    root.find(f"{HEADER}/CessionarioCommittente").append(short_representative("123"))
    messages = [f.message for f in identity_findings(root)]
    assert [m.split(" ")[0] for m in messages] == ["1.3.1.1.2", "1.4.4.1.2"]


@pytest.mark.parametrize("kind", ORDINARY_KINDS)
@pytest.mark.parametrize("bad", [BAD_PERSON, BAD_VAT])
def test_00304_representative_tax_code_invalid(kind: str, bad: str) -> None:
    finding = only(with_representative(kind, "supplier", VALID_VAT, tax_code=bad), "00304")
    assert finding.message.startswith(f"1.3.1.2 CodiceFiscale {bad} of the supplier's fiscal representative")
    assert finding.xpath.endswith("/RappresentanteFiscale/DatiAnagrafici/CodiceFiscale")


@pytest.mark.parametrize("kind", ORDINARY_KINDS)
@pytest.mark.parametrize("good", [VALID_PERSON, VALID_VAT])
def test_00304_representative_tax_code_valid(kind: str, good: str) -> None:
    passes(with_representative(kind, "supplier", VALID_VAT, tax_code=good))


# -- 00330 PECDestinatario of the SDI itself ----------------------------------------------------


def with_pec(kind: str, address: str) -> etree._Element:
    def edit(root: etree._Element) -> None:
        element = root.find(f"{TRANSMISSION}/PECDestinatario")
        if element is None:
            element = etree.Element("PECDestinatario")
            root.find(f"{TRANSMISSION}/CodiceDestinatario").addnext(element)
        element.text = address

    return edited(kind, edit)


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("sdi01@pec.fatturapa.it", "own PEC mailboxes"),
        ("SDI27@PEC.FatturaPA.it", "own PEC mailboxes"),
        ("sdi123@pec.fatturapa.it", "own PEC mailboxes"),
        ("protocollo@pec.fatturapa.it", "own domain pec.fatturapa.it"),
        ("sdi01@mail.pec.fatturapa.it", "own domain pec.fatturapa.it"),
    ],
)
def test_00330_pec_of_the_exchange_system(kind: str, address: str, why: str) -> None:
    finding = only(with_pec(kind, address), "00330")
    number = "1.1.5" if kind == "FSM10" else "1.1.6"
    assert finding.message.startswith(f"{number} PECDestinatario {address} (XML line ")
    assert why in finding.message


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize(
    "address", ["fatture@pec.beta.example.it", "sdi01@pec.fatturapa.it.example.com", "sdi01@fatturapec.it"]
)
def test_00330_other_pec_addresses_pass(kind: str, address: str) -> None:
    passes(with_pec(kind, address))


def test_generated_identifiers_are_what_the_tests_say() -> None:
    assert iva.is_valid(VALID_VAT) and not iva.is_valid(BAD_VAT)
    assert codicefiscale.is_valid(VALID_PERSON) and not codicefiscale.is_valid(BAD_PERSON)
