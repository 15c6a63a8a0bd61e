"""Writes the extra-schema rule corpus: variant files under `variants/` and `manifest.json`.

Each variant is a valid base (`base/*.xml`) plus a few edits that break exactly one rule (or, for
"must pass" variants, none). To add a case, add one `Variant` to VARIANTS and run

    .venv/bin/python tests/fatturapa/cases/make_cases.py

The output is deterministic; `test_async_rules.py` checks that the committed files match it.
Every variant must stay XSD-valid: the rules assume an XSD-valid document.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

HERE = Path(__file__).parent
BASES = {
    "FPA12": "base/FPA12.xml",
    "FPR12": "base/FPR12.xml",
    "FSM10": "base/FSM10.xml",
    "FPR12_batch": "base/FPR12_batch.xml",
}
OFFICIAL = [
    "official/IT01234567890_FPA01.xml",
    "official/IT01234567890_FPA02.xml",
    "official/IT01234567890_FPA03.xml",
    "official/IT01234567890_FPR01.xml",
    "official/IT01234567890_FPR03.xml",
]

Edit = Callable[[etree._Element], None]


def _find(root: etree._Element, path: str) -> etree._Element:
    element = root if path == "." else root.find(path)
    if element is None:
        raise LookupError(f"no element at {path!r}")
    return element


def set_text(path: str, value: str) -> Edit:
    def edit(root: etree._Element) -> None:
        _find(root, path).text = value

    return edit


def remove(path: str) -> Edit:
    def edit(root: etree._Element) -> None:
        element = _find(root, path)
        element.getparent().remove(element)

    return edit


def insert_after(path: str, xml: str) -> Edit:
    def edit(root: etree._Element) -> None:
        _find(root, path).addnext(etree.fromstring(xml))

    return edit


def insert_before(path: str, xml: str) -> Edit:
    def edit(root: etree._Element) -> None:
        _find(root, path).addprevious(etree.fromstring(xml))

    return edit


def set_root_attribute(name: str, value: str) -> Edit:
    def edit(root: etree._Element) -> None:
        root.set(name, value)

    return edit


# Paths (ElementPath, relative to the root; children are unqualified).
HEADER = "FatturaElettronicaHeader"
RECIPIENT_CODE = f"{HEADER}/DatiTrasmissione/CodiceDestinatario"
SUPPLIER = f"{HEADER}/CedentePrestatore/DatiAnagrafici"
CLIENT = f"{HEADER}/CessionarioCommittente/DatiAnagrafici"
S_SUPPLIER = f"{HEADER}/CedentePrestatore"  # simplified
S_CLIENT = f"{HEADER}/CessionarioCommittente/IdentificativiFiscali"  # simplified


def body(index: int = 1) -> str:
    return f"FatturaElettronicaBody[{index}]"


def document(index: int = 1) -> str:
    return f"{body(index)}/DatiGenerali/DatiGeneraliDocumento"


def line(number: int, index: int = 1) -> str:
    return f"{body(index)}/DatiBeniServizi/DettaglioLinee[{number}]"


def summary(number: int, index: int = 1) -> str:
    return f"{body(index)}/DatiBeniServizi/DatiRiepilogo[{number}]"


def goods(number: int) -> str:  # simplified 2.2 DatiBeniServizi
    return f"{body()}/DatiBeniServizi[{number}]"


def doc_type(value: str, index: int = 1) -> Edit:
    return set_text(f"{document(index)}/TipoDocumento", value)


def vat(country: str, code: str, party: str = SUPPLIER) -> list[Edit]:
    """IdFiscaleIVA of `party` (the supplier unless told) set to `country` + `code`."""
    return [
        set_text(f"{party}/IdFiscaleIVA/IdPaese", country),
        set_text(f"{party}/IdFiscaleIVA/IdCodice", code),
    ]


def client_same_as_supplier(party: str = CLIENT) -> list[Edit]:
    """The client gets the supplier's identifiers (VAT 01234560017, tax code 01234560017)."""
    return [
        set_text(f"{party}/IdFiscaleIVA/IdCodice", "01234560017"),
        set_text(f"{party}/CodiceFiscale", "01234560017"),
    ]


def linked_invoice(day: str, index: int = 1) -> Edit:
    """A 2.1.6 DatiFattureCollegate dated `day`, right after DatiGeneraliDocumento."""
    return insert_after(
        document(index),
        f"<DatiFattureCollegate><IdDocumento>2026/099</IdDocumento><Data>{day}</Data></DatiFattureCollegate>",
    )


def corrected_invoice(day: str) -> Edit:
    """A simplified 2.1.2 DatiFatturaRettificata with 2.1.2.2 DataFR `day`."""
    return insert_after(
        document(),
        "<DatiFatturaRettificata><NumeroFR>S-2026-09</NumeroFR>"
        f"<DataFR>{day}</DataFR><ElementiRettificati>IMPORTO</ElementiRettificati></DatiFatturaRettificata>",
    )


@dataclass(frozen=True)
class Variant:
    name: str  # file stem under variants/
    base: str  # key of BASES
    expect: tuple[str, ...]  # codes run_rules must report (as a set); () = must pass
    why: str
    edits: tuple[Edit, ...]
    body: int | None = None  # 1-based body every expected finding must name (batch cases)


def v(
    name: str, base: str, expect: str, why: str, *edits: Edit | list[Edit], body: int | None = None
) -> Variant:
    """A variant: file stem, base key, expected codes separated by spaces ("" = must pass), the
    reason (also the file's comment), then the edits in order (lists of edits are flattened)."""
    flat: list[Edit] = []
    for edit in edits:
        flat.extend(edit if isinstance(edit, list) else [edit])
    return Variant(name, base, tuple(expect.split()), why, tuple(flat), body)


VARIANTS: list[Variant] = [
    # --- client identifiers: 00305, 00306, 00417
    v(
        "00305_it_check_digit",
        "FPR12",
        "00305",
        "client IdCodice 09876540016: wrong Italian check digit",
        set_text(f"{CLIENT}/IdFiscaleIVA/IdCodice", "09876540016"),
    ),
    v(
        "00305_it_prefix",
        "FPR12",
        "00305",
        "client IdCodice IT09876540015 repeats the country: IdCodice is the bare 11 digits",
        set_text(f"{CLIENT}/IdFiscaleIVA/IdCodice", "IT09876540015"),
    ),
    v(
        "00305_eu_check_digit",
        "FPR12",
        "00305",
        "client DE136695977: wrong German VAT check digit",
        vat("DE", "136695977", CLIENT),
        remove(f"{CLIENT}/CodiceFiscale"),
        set_text(RECIPIENT_CODE, "XXXXXXX"),
    ),
    v(
        "00305_non_eu_shape",
        "FPR12",
        "00305",
        "client US IdCodice '-' has no letter or digit",
        vat("US", "-", CLIENT),
        remove(f"{CLIENT}/CodiceFiscale"),
        set_text(RECIPIENT_CODE, "XXXXXXX"),
    ),
    v(
        "00305_simplified",
        "FSM10",
        "00305",
        "simplified: client 1.3.1.1.2 IdCodice with a wrong check digit",
        set_text(f"{S_CLIENT}/IdFiscaleIVA/IdCodice", "09876540016"),
    ),
    v(
        "00306_company_check_digit",
        "FPA12",
        "00306",
        "client CodiceFiscale 09876540016: wrong check digit",
        set_text(f"{CLIENT}/CodiceFiscale", "09876540016"),
    ),
    v(
        "00306_personal_check_char",
        "FPR12",
        "00306",
        "client personal CodiceFiscale with a wrong check character",
        set_text(f"{CLIENT}/CodiceFiscale", "RSSMRA80A01H501X"),
    ),
    v(
        "00306_length",
        "FPR12",
        "00306",
        "client CodiceFiscale of 13 characters (XSD allows 11-16)",
        set_text(f"{CLIENT}/CodiceFiscale", "0987654001512"),
    ),
    v(
        "00306_simplified",
        "FSM10",
        "00306",
        "simplified: client 1.3.1.2 CodiceFiscale with a wrong check digit",
        set_text(f"{S_CLIENT}/CodiceFiscale", "09876540016"),
    ),
    v(
        "pass_personal_tax_code",
        "FPR12",
        "",
        "client identified by a valid personal CodiceFiscale",
        remove(f"{CLIENT}/IdFiscaleIVA"),
        set_text(f"{CLIENT}/CodiceFiscale", "RSSMRA80A01H501U"),
    ),
    v(
        "00417_no_identifier",
        "FPR12",
        "00417",
        "client with neither IdFiscaleIVA nor CodiceFiscale",
        remove(f"{CLIENT}/IdFiscaleIVA"),
        remove(f"{CLIENT}/CodiceFiscale"),
    ),
    v(
        "00417_simplified",
        "FSM10",
        "00417",
        "simplified: empty 1.3.1 IdentificativiFiscali",
        remove(f"{S_CLIENT}/IdFiscaleIVA"),
        remove(f"{S_CLIENT}/CodiceFiscale"),
    ),
    # --- Natura against rates on lines: 00400, 00401
    v(
        "00400_line_without_natura",
        "FPR12",
        "00400",
        "line 4 at 0.00 without Natura (line 3 keeps N4)",
        remove(f"{line(4)}/Natura"),
    ),
    v(
        "00400_simplified",
        "FSM10",
        "00400",
        "simplified: block 2 with Aliquota 0.00 and no 2.2.4 Natura",
        remove(f"{goods(2)}/Natura"),
        remove(f"{goods(2)}/RiferimentoNormativo"),
    ),
    v(
        "00401_natura_on_taxed_line",
        "FPR12",
        "00401",
        "line 2 at 22.00 carries Natura N4",
        insert_after(f"{line(2)}/AliquotaIVA", "<Natura>N4</Natura>"),
    ),
    v(
        "00401_simplified",
        "FSM10",
        "00401",
        "simplified: block 1 with 22.00 VAT carries 2.2.4 Natura N4",
        insert_after(f"{goods(1)}/DatiIVA", "<Natura>N4</Natura>"),
    ),
    v(
        "pass_td16_natura_on_taxed_line",
        "FPR12",
        "",
        "TD16: Natura N6.3 allowed on 22.00 lines and summary",
        doc_type("TD16"),
        insert_after(f"{line(2)}/AliquotaIVA", "<Natura>N6.3</Natura>"),
        insert_after(f"{summary(1)}/AliquotaIVA", "<Natura>N6.3</Natura>"),
    ),
    v(
        "pass_td16_natura_on_zero_rate",
        "FPR12",
        "",
        "TD16 with Natura on its zero-rate lines",
        doc_type("TD16"),
    ),
    # --- dates: 00403, 00418
    v(
        "00403_future_date",
        "FPR12",
        "00403",
        "2.1.1.3 Data 2026-11-24, after the reception day 2026-11-23",
        set_text(f"{document()}/Data", "2026-11-24"),
    ),
    v(
        "00403_credit_note_before_invoice",
        "FPR12",
        "00403",
        "TD04 dated 2026-10-15 credits an invoice of 2026-10-20",
        doc_type("TD04"),
        linked_invoice("2026-10-20"),
    ),
    v(
        "00403_simplified",
        "FSM10",
        "00403",
        "simplified: Data 2026-11-24 after the reception day",
        set_text(f"{document()}/Data", "2026-11-24"),
    ),
    v(
        "pass_credit_note_after_invoice",
        "FPR12",
        "",
        "TD04 dated after the invoice it credits",
        doc_type("TD04"),
        linked_invoice("2026-09-30"),
    ),
    v(
        "00418_linked_invoice_later",
        "FPR12",
        "00418",
        "TD01 dated 2026-10-15 links an invoice of 2026-10-20",
        linked_invoice("2026-10-20"),
    ),
    v(
        "00418_simplified",
        "FSM10",
        "00418",
        "simplified: DataFR 2026-10-25 after Data 2026-10-20",
        doc_type("TD08"),
        corrected_invoice("2026-10-25"),
    ),
    # --- withholding: 00411, 00415
    v(
        "00411_line_withholding",
        "FPR12",
        "00411",
        "line 1 with Ritenuta SI and no DatiRitenuta",
        remove(f"{document()}/DatiRitenuta"),
        remove(f"{document()}/DatiCassaPrevidenziale/Ritenuta"),
        insert_after(f"{line(1)}/AliquotaIVA", "<Ritenuta>SI</Ritenuta>"),
    ),
    v(
        "00411_00415_line_and_pension_fund",
        "FPR12",
        "00411 00415",
        "line 1 and the pension fund with Ritenuta SI, no DatiRitenuta: one finding per cause",
        remove(f"{document()}/DatiRitenuta"),
        insert_after(f"{line(1)}/AliquotaIVA", "<Ritenuta>SI</Ritenuta>"),
    ),
    v(
        "00415_pension_fund_withholding",
        "FPR12",
        "00415",
        "pension fund with Ritenuta SI and no DatiRitenuta",
        remove(f"{document()}/DatiRitenuta"),
    ),
    # --- pension fund Natura: 00413
    v(
        "00413_fund_zero_without_natura",
        "FPR12",
        "00413",
        "pension fund at 0.00 without 2.1.1.7.7 Natura",
        set_text(f"{document()}/DatiCassaPrevidenziale/AliquotaIVA", "0.00"),
    ),
    v(
        "00413_fund_taxed_with_natura",
        "FPR12",
        "00413",
        "pension fund at 22.00 with 2.1.1.7.7 Natura N4",
        insert_after(f"{document()}/DatiCassaPrevidenziale/Ritenuta", "<Natura>N4</Natura>"),
    ),
    # --- summary blocks: 00419, 00420, 00429, 00430, 00443, 00444
    v(
        "00419_missing_summary",
        "FPR12",
        "00419",
        "rates 22, 10, 0 but no summary block for 10.00",
        remove(summary(2)),
    ),
    v(
        "00420_reverse_charge_split_payment",
        "FPA12",
        "00420",
        "summary with Natura N6.1 and EsigibilitaIVA S",
        set_text(f"{line(3)}/Natura", "N6.1"),
        set_text(f"{summary(2)}/Natura", "N6.1"),
        insert_after(f"{summary(2)}/Imposta", "<EsigibilitaIVA>S</EsigibilitaIVA>"),
    ),
    v(
        "00429_zero_summary_without_natura",
        "FPR12",
        "00429",
        "an extra 0.00 summary block without Natura",
        insert_after(
            summary(3),
            "<DatiRiepilogo><AliquotaIVA>0.00</AliquotaIVA><ImponibileImporto>0.00"
            "</ImponibileImporto><Imposta>0.00</Imposta></DatiRiepilogo>",
        ),
    ),
    v(
        "00430_natura_on_taxed_summary",
        "FPR12",
        "00430",
        "summary block at 22.00 carries Natura N4",
        insert_after(f"{summary(1)}/AliquotaIVA", "<Natura>N4</Natura>"),
    ),
    v(
        "00443_rate_mismatch",
        "FPR12",
        "00443",
        "line rate 10.00 summarised as 5.00",
        set_text(f"{summary(2)}/AliquotaIVA", "5.00"),
    ),
    v(
        "00444_natura_mismatch",
        "FPR12",
        "00444",
        "line 3 Natura N3.1 appears in no summary block",
        set_text(f"{line(3)}/Natura", "N3.1"),
    ),
    # --- rates as percentages: 00424
    v(
        "00424_fraction_rate",
        "FPR12",
        "00424",
        "rate 10% written 0.10 on line 5 and its summary",
        set_text(f"{line(5)}/AliquotaIVA", "0.10"),
        set_text(f"{summary(2)}/AliquotaIVA", "0.10"),
    ),
    v(
        "00424_simplified",
        "FSM10",
        "00424",
        "simplified: 2.2.3.2 Aliquota 0.22",
        set_text(f"{goods(1)}/DatiIVA/Aliquota", "0.22"),
    ),
    # --- numbering: 00425
    v(
        "00425_number_without_digit",
        "FPA12",
        "00425",
        "Numero 'FPA-ABC' has no digit",
        set_text(f"{document()}/Numero", "FPA-ABC"),
    ),
    v(
        "00425_simplified",
        "FSM10",
        "00425",
        "simplified: Numero 'S-XYZ' has no digit",
        set_text(f"{document()}/Numero", "S-XYZ"),
    ),
    # --- transmission: 00427, 00428
    v(
        "00427_fpr12_six_chars",
        "FPR12",
        "00427",
        "FPR12 with the 6-character code ABC123",
        set_text(RECIPIENT_CODE, "ABC123"),
    ),
    v(
        "00427_fpa12_seven_chars",
        "FPA12",
        "00427",
        "FPA12 with the 7-character code ABC1234",
        set_text(RECIPIENT_CODE, "ABC1234"),
    ),
    v(
        "00428_format_contradicts_version",
        "FPR12",
        "00428",
        "root versione FPA12, 1.1.3 FormatoTrasmissione FPR12",
        set_root_attribute("versione", "FPA12"),
    ),
    # --- discounts: 00437, 00438
    v(
        "00437_document_discount_without_amount",
        "FPR12",
        "00437",
        "2.1.1.8 SC without Percentuale or Importo",
        remove(f"{document()}/ScontoMaggiorazione/Importo"),
    ),
    v(
        "00438_line_discount_without_amount",
        "FPR12",
        "00438",
        "line 1 2.2.1.10 SC without Percentuale or Importo",
        remove(f"{line(1)}/ScontoMaggiorazione/Percentuale"),
    ),
    # --- generic Natura: 00445
    v(
        "00445_generic_n2",
        "FPR12",
        "00445",
        "Natura N2 on lines 3-4 and the summary of a 2026 invoice",
        set_text(f"{line(3)}/Natura", "N2"),
        set_text(f"{line(4)}/Natura", "N2"),
        set_text(f"{summary(3)}/Natura", "N2"),
    ),
    v(
        "00445_simplified",
        "FSM10",
        "00445",
        "simplified: 2.2.4 Natura N3 on a 2026 invoice",
        set_text(f"{goods(2)}/Natura", "N3"),
    ),
    v(
        "pass_n2_1_after_2021",
        "FPR12",
        "",
        "sub-code N2.1 is fine after 2021",
        set_text(f"{line(3)}/Natura", "N2.1"),
        set_text(f"{line(4)}/Natura", "N2.1"),
        set_text(f"{summary(3)}/Natura", "N2.1"),
    ),
    v(
        "pass_n2_before_2021",
        "FPR12",
        "",
        "generic N2 is still fine on an invoice dated 2020-12-31",
        set_text(f"{document()}/Data", "2020-12-31"),
        set_text(f"{line(3)}/Natura", "N2"),
        set_text(f"{line(4)}/Natura", "N2"),
        set_text(f"{summary(3)}/Natura", "N2"),
    ),
    # --- simplified total: 00460
    v(
        "00460_over_400",
        "FSM10",
        "00460",
        "simplified blocks add up to 550.00 euros",
        set_text(f"{goods(1)}/Importo", "500.00"),
    ),
    v(
        "pass_simplified_correction_over_400",
        "FSM10",
        "",
        "above 400 euros but correcting an invoice (2.1.2)",
        doc_type("TD08"),
        set_text(f"{goods(1)}/Importo", "500.00"),
        corrected_invoice("2026-09-01"),
    ),
    # --- parties: 00471-00476
    v(
        "00471_self_billing_td01",
        "FPR12",
        "00471",
        "TD01 whose client is the supplier itself",
        client_same_as_supplier(),
    ),
    v(
        "00471_simplified_td07",
        "FSM10",
        "00471",
        "simplified TD07 whose client is the supplier itself",
        set_text(f"{S_CLIENT}/IdFiscaleIVA/IdCodice", "01234560017"),
        set_text(f"{S_CLIENT}/CodiceFiscale", "RSSMRA80A01H501U"),
    ),
    v(
        "00472_td27_other_client",
        "FPR12",
        "00472",
        "TD27 self-consumption invoice with a different client",
        doc_type("TD27"),
    ),
    v(
        "pass_td21_same_party",
        "FPR12",
        "",
        "TD21 self-invoice, same party, every line taxed",
        doc_type("TD21"),
        client_same_as_supplier(),
        set_text(f"{line(3)}/AliquotaIVA", "22.00"),
        remove(f"{line(3)}/Natura"),
        set_text(f"{line(4)}/AliquotaIVA", "22.00"),
        remove(f"{line(4)}/Natura"),
        remove(summary(3)),
    ),
    v(
        "00473_td17_italian_supplier",
        "FPR12",
        "00473",
        "TD17 integration with an IT supplier",
        doc_type("TD17"),
    ),
    v(
        "00473_td18_oo_supplier",
        "FPR12",
        "00473",
        "TD18 with supplier IdPaese OO (allowed for TD17/TD19 only)",
        doc_type("TD18"),
        vat("OO", "12345678901"),
    ),
    v(
        "00473_td28_not_san_marino",
        "FPR12",
        "00473",
        "TD28 with a French supplier (must be SM)",
        doc_type("TD28"),
        vat("FR", "40303265045"),
    ),
    v(
        "pass_td17_oo_supplier",
        "FPR12",
        "",
        "TD17 with supplier IdPaese OO (Livigno, Campione d'Italia)",
        doc_type("TD17"),
        vat("OO", "12345678901"),
    ),
    v(
        "pass_td17_foreign_supplier",
        "FPR12",
        "",
        "TD17 with a German supplier",
        doc_type("TD17"),
        vat("DE", "136695976"),
    ),
    v(
        "pass_td28_san_marino",
        "FPR12",
        "",
        "TD28 with a San Marino supplier",
        doc_type("TD28"),
        vat("SM", "12345"),
    ),
    v(
        "00474_td21_zero_rate_line",
        "FPR12",
        "00474",
        "TD21 self-invoice with zero-rate lines 3 and 4",
        doc_type("TD21"),
        client_same_as_supplier(),
    ),
    v(
        "00475_td16_client_without_vat",
        "FPR12",
        "00475",
        "TD16 with a client identified by tax code only",
        doc_type("TD16"),
        remove(f"{CLIENT}/IdFiscaleIVA"),
    ),
    v(
        "00476_both_foreign",
        "FPR12",
        "00476",
        "French supplier and German client",
        vat("FR", "40303265045"),
        vat("DE", "136695976", CLIENT),
        remove(f"{CLIENT}/CodiceFiscale"),
        set_text(RECIPIENT_CODE, "XXXXXXX"),
    ),
    v(
        "00476_simplified",
        "FSM10",
        "00476",
        "simplified: French supplier and German client",
        vat("FR", "40303265045", S_SUPPLIER),
        vat("DE", "136695976", S_CLIENT),
        remove(f"{S_CLIENT}/CodiceFiscale"),
    ),
    v(
        "pass_foreign_client",
        "FPR12",
        "",
        "German client with a valid VAT number, recipient code XXXXXXX",
        vat("DE", "136695976", CLIENT),
        remove(f"{CLIENT}/CodiceFiscale"),
        set_text(RECIPIENT_CODE, "XXXXXXX"),
    ),
    v(
        "pass_non_eu_client",
        "FPR12",
        "",
        "US client: only the shape of IdCodice is checked",
        vat("US", "12-3456789", CLIENT),
        remove(f"{CLIENT}/CodiceFiscale"),
        set_text(RECIPIENT_CODE, "XXXXXXX"),
    ),
    # --- batch: only body 2 breaks a rule
    v(
        "batch_00425_body2",
        "FPR12_batch",
        "00425",
        "batch: body 2 Numero 'ABC' has no digit",
        set_text(f"{document(2)}/Numero", "ABC"),
        body=2,
    ),
    v(
        "batch_00400_body2",
        "FPR12_batch",
        "00400",
        "batch: body 2 line 3 at 0.00 without Natura",
        remove(f"{line(3, 2)}/Natura"),
        body=2,
    ),
]


def _render(root: etree._Element, comment: str) -> bytes:
    fresh = copy.deepcopy(root)
    etree.indent(fresh, space="  ")
    head = f"<?xml version='1.0' encoding='UTF-8'?>\n<!-- {comment} -->\n".encode()
    return head + etree.tostring(fresh, encoding="UTF-8") + b"\n"


def _base_root(name: str) -> etree._Element:
    parser = etree.XMLParser(no_network=True, resolve_entities=False, remove_blank_text=True)
    return etree.parse(str(HERE / BASES[name]), parser).getroot()


def _format(root: etree._Element) -> str:
    return root.get("versione", "")


def build() -> dict[str, bytes]:
    """Every generated file (relative path -> content): the variants and the manifest."""
    files: dict[str, bytes] = {}
    manifest: list[dict[str, object]] = []
    for name, path in BASES.items():
        manifest.append(
            {
                "file": path,
                "format": _format(_base_root(name)),
                "expect": [],
                "body": None,
                "why": "valid base invoice",
            }
        )
    for path in OFFICIAL:
        root = etree.parse(str(HERE / path)).getroot()
        manifest.append(
            {
                "file": path,
                "format": _format(root),
                "expect": ["00306"],
                "body": None,
                "why": "official sample: client CodiceFiscale 09876543210 has a wrong check digit",
            }
        )
    seen: set[str] = set()
    for variant in VARIANTS:
        if variant.name in seen:
            raise ValueError(f"duplicate variant {variant.name}")
        seen.add(variant.name)
        root = _base_root(variant.base)
        for edit in variant.edits:
            edit(root)
        path = f"variants/{variant.name}.xml"
        comment = f"generated by make_cases.py from {BASES[variant.base]}, do not edit: {variant.why}"
        files[path] = _render(root, comment.replace("--", "-"))
        manifest.append(
            {
                "file": path,
                "format": _format(root),
                "expect": list(variant.expect),
                "body": variant.body,
                "why": variant.why,
            }
        )
    files["manifest.json"] = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()
    return files


def main() -> None:
    files = build()
    variants = HERE / "variants"
    variants.mkdir(exist_ok=True)
    for stale in variants.glob("*.xml"):
        if f"variants/{stale.name}" not in files:
            stale.unlink()
    for path, content in files.items():
        (HERE / path).write_bytes(content)
    print(f"wrote {len(files) - 1} variants and manifest.json")


if __name__ == "__main__":
    main()
