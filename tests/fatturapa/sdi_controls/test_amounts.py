"""SDI controls on amounts (00421, 00422, 00423), the taxed pension-fund Natura (00414) and the
abolished tax regime RF03 (00459): each against a minimal failing invoice and its passing twin,
edited from the valid bases with lxml."""

from __future__ import annotations

import copy
import time

import pytest
from lxml import etree

from tests.fatturapa.cases_support import RECEIVED_DATE
from tests.fatturapa.sdi_controls.support import BASES, base, codes, edited, sdi_findings, xml
from varco.fatturapa import CheckOptions, Finding, check
from varco.fatturapa.rules.async_rules._xml import MAX_PER_BODY
from varco.fatturapa.sdi_controls import CONTROLS, check_sdi
from varco.fatturapa.sdi_controls.registry import SdiContext, controls_for

MINE = frozenset({"00414", "00421", "00422", "00423", "00459"})

Element = etree._Element


# --- editing helpers ---------------------------------------------------------------------------


def body(root: Element, number: int = 1) -> Element:
    return root.findall("FatturaElettronicaBody")[number - 1]


def line(root: Element, number: int, body_number: int = 1) -> Element:
    return body(root, body_number).findall("DatiBeniServizi/DettaglioLinee")[number - 1]


def summary(root: Element, rate: str, body_number: int = 1, natura: str | None = None) -> Element:
    for block in body(root, body_number).iterfind("DatiBeniServizi/DatiRiepilogo"):
        if block.findtext("AliquotaIVA") == rate and (natura is None or block.findtext("Natura") == natura):
            return block
    raise LookupError(rate)


def fund(root: Element, body_number: int = 1) -> Element:
    return body(root, body_number).find("DatiGenerali/DatiGeneraliDocumento/DatiCassaPrevidenziale")


def put(element: Element, tag: str, value: str) -> None:
    element.find(tag).text = value


def element(tag: str, value: str | None = None, *children: Element) -> Element:
    made = etree.Element(tag)
    made.text = value
    made.extend(children)
    return made


def discount(kind: str, percent: str | None = None, value: str | None = None) -> Element:
    parts = [element("Tipo", kind)]
    if percent is not None:
        parts.append(element("Percentuale", percent))
    if value is not None:
        parts.append(element("Importo", value))
    return element("ScontoMaggiorazione", None, *parts)


def add_discount(detail: Element, block: Element) -> None:
    """A 2.2.1.10 block after the line's existing ones (just before PrezzoTotale)."""
    detail.find("PrezzoTotale").addprevious(block)


def summary_block(rate: str, taxable: str, tax: str, natura: str | None = None, due: str = "I") -> Element:
    parts = [element("AliquotaIVA", rate)]
    if natura is not None:
        parts.append(element("Natura", natura))
    parts += [element("ImponibileImporto", taxable), element("Imposta", tax), element("EsigibilitaIVA", due)]
    if natura is not None:
        parts.append(element("RiferimentoNormativo", "ESENTE"))
    return element("DatiRiepilogo", None, *parts)


# --- findings helpers --------------------------------------------------------------------------


def mine(root: Element) -> list[Finding]:
    return [finding for finding in sdi_findings(root) if finding.code in MINE]


def only(root: Element, code: str) -> list[Finding]:
    return [finding for finding in sdi_findings(root) if finding.code == code]


def one(root: Element, code: str) -> Finding:
    found = only(root, code)
    assert len(found) == 1, found
    return found[0]


def run_control(code: str, root: Element, fmt: str = "FPR12") -> list[Finding]:
    """Run one control directly, without the schema (for values the XSD no longer admits)."""
    ctx = SdiContext(root=root, format=fmt, received_date=RECEIVED_DATE)
    return [finding for spec in CONTROLS if spec.code == code for finding in spec.run(ctx)]


# --- registration and bases --------------------------------------------------------------------


def test_controls_are_registered_for_the_ordinary_formats_only() -> None:
    specs = [spec for spec in CONTROLS if spec.code in MINE]
    assert {spec.code for spec in specs} == MINE
    for spec in specs:
        assert spec.formats == frozenset({"FPA12", "FPR12"})
        assert spec.hint and not spec.approximated
    assert not MINE & {spec.code for spec in controls_for("FSM10")}


@pytest.mark.parametrize("kind", sorted(BASES))
def test_every_base_passes(kind: str) -> None:
    assert mine(base(kind)) == []


# --- 00423 PrezzoTotale ------------------------------------------------------------------------


def test_00423_wrong_line_total() -> None:
    root = edited("FPR12", lambda r: put(line(r, 2), "PrezzoTotale", "57.00"))
    finding = one(root, "00423")
    assert finding.stage == "sdi" and finding.body == 1 and finding.hint
    assert finding.xpath.endswith("FatturaElettronicaBody/DatiBeniServizi/DettaglioLinee[2]/PrezzoTotale")
    assert finding.message.startswith("detail line 2 (XML line ")
    assert "PrezzoTotale 57.00 is not PrezzoUnitario 55.00 × Quantita 1.00 = 55.00 (tolerance 0.01)" in (
        finding.message
    )
    assert "00423" not in codes(base("FPR12"))


def test_00423_quantity_multiplies() -> None:
    root = edited("FPA12", lambda r: put(line(r, 1), "PrezzoTotale", "7.00"))
    assert "PrezzoTotale 7.00 is not PrezzoUnitario 1.00 × Quantita 5.00 = 5.00" in one(root, "00423").message


def test_00423_absent_quantity_counts_as_one() -> None:
    assert line(base("FPA12"), 3).find("Quantita") is None  # the base's passing twin
    root = edited("FPA12", lambda r: put(line(r, 3), "PrezzoTotale", "9.00"))
    assert "PrezzoTotale 9.00 is not PrezzoUnitario 8.00 × Quantita 1 (absent) = 8.00" in (
        one(root, "00423").message
    )


@pytest.mark.parametrize(
    ("total", "refused"),
    [("55.01", False), ("54.99", False), ("55.02", True), ("54.98", True), ("55.00", False)],
)
def test_00423_tolerance_is_one_cent(total: str, refused: bool) -> None:
    root = edited("FPR12", lambda r: put(line(r, 2), "PrezzoTotale", total))
    assert ("00423" in codes(root)) is refused


def test_00423_discounts_apply_in_order_on_the_running_amount() -> None:
    def cascade(total: str):
        def edit(root: Element) -> None:
            add_discount(line(root, 1), discount("SC", percent="10.00"))  # after the base's SC 10%
            put(line(root, 1), "PrezzoTotale", total)

        return edit

    assert "00423" not in codes(edited("FPR12", cascade("40.50")))  # 50 - 10% = 45, - 10% = 40.50
    message = one(edited("FPR12", cascade("45.00")), "00423").message
    assert "PrezzoUnitario 10.00 × Quantita 5.00, then SC 10.00%, SC 10.00% = 40.50" in message


def test_00423_surcharge_raises() -> None:
    def surcharge(total: str):
        def edit(root: Element) -> None:
            add_discount(line(root, 2), discount("MG", percent="10.00"))
            put(line(root, 2), "PrezzoTotale", total)

        return edit

    assert "00423" not in codes(edited("FPR12", surcharge("60.50")))
    assert "then MG 10.00% = 60.50" in one(edited("FPR12", surcharge("55.00")), "00423").message


def test_00423_importo_wins_over_percentuale() -> None:
    def both(total: str):
        def edit(root: Element) -> None:
            add_discount(line(root, 2), discount("SC", percent="50.00", value="5.00"))
            put(line(root, 2), "PrezzoTotale", total)

        return edit

    assert "00423" not in codes(edited("FPR12", both("50.00")))
    message = one(edited("FPR12", both("27.50")), "00423").message
    assert "then SC 5.00 = 50.00" in message


@pytest.mark.parametrize(("total", "refused"), [("45.00", False), ("49.00", False), ("47.00", True)])
def test_00423_amount_discount_per_unit_or_on_the_line(total: str, refused: bool) -> None:
    """Line 1: 5 × 10.00 with SC Importo 1.00 is 45.00 read per unit and 49.00 on the line total."""

    def edit(root: Element) -> None:
        block = line(root, 1).find("ScontoMaggiorazione")
        block.replace(block.find("Percentuale"), element("Importo", "1.00"))
        put(line(root, 1), "PrezzoTotale", total)

    root = edited("FPR12", edit)
    found = only(root, "00423")
    assert bool(found) is refused
    if refused:
        assert "then SC 1.00 = 45.00 (amounts per unit) or 49.00 (amounts on the line total)" in (
            found[0].message
        )


def test_00423_leaves_a_discount_without_amount_to_00438() -> None:
    def edit(root: Element) -> None:
        block = line(root, 1).find("ScontoMaggiorazione")
        block.remove(block.find("Percentuale"))

    assert "00423" not in codes(edited("FPR12", edit))


@pytest.mark.parametrize("body_number", [1, 2])
def test_00423_batch_names_the_body(body_number: int) -> None:
    root = edited("batch", lambda r: put(line(r, 1, body_number), "PrezzoTotale", "21.00"))
    finding = one(root, "00423")
    assert finding.body == body_number
    assert finding.message.startswith(f"body {body_number}: detail line 1 (XML line ")
    assert f"FatturaElettronicaBody[{body_number}]/DatiBeniServizi/DettaglioLinee" in finding.xpath
    assert finding.xpath.endswith("/PrezzoTotale")


# --- 00422 ImponibileImporto -------------------------------------------------------------------


def test_00422_wrong_taxable_amount() -> None:
    root = edited("FPR12", lambda r: put(summary(r, "22.00"), "ImponibileImporto", "110.00"))
    finding = one(root, "00422")
    assert finding.body == 1 and finding.hint
    assert finding.xpath.endswith("DatiBeniServizi/DatiRiepilogo[1]/ImponibileImporto")
    assert finding.message.startswith("summary block 2.2.2 AliquotaIVA 22.00 (XML line ")
    assert (
        "ImponibileImporto 110.00 is not PrezzoTotale of 2 detail line(s) 100.00 + ImportoContributoCassa "
        "of 1 pension-fund block(s) 4.00 = 104.00 (tolerance 1.00)"
    ) in finding.message


@pytest.mark.parametrize(
    ("taxable", "refused"),
    [("105.00", False), ("103.00", False), ("105.01", True), ("102.99", True), ("104.00", False)],
)
def test_00422_tolerance_is_one_euro(taxable: str, refused: bool) -> None:
    root = edited("FPR12", lambda r: put(summary(r, "22.00"), "ImponibileImporto", taxable))
    assert ("00422" in codes(root)) is refused


def test_00422_counts_the_pension_fund_contribution() -> None:
    root = edited("FPR12", lambda r: put(fund(r), "ImportoContributoCassa", "6.00"))
    assert "ImportoContributoCassa of 1 pension-fund block(s) 6.00 = 106.00" in one(root, "00422").message


@pytest.mark.parametrize(("rounding", "refused"), [("2.50", False), (None, True)])
def test_00422_adds_the_summary_rounding(rounding: str | None, refused: bool) -> None:
    def edit(root: Element) -> None:
        block = summary(root, "22.00")
        if rounding is not None:
            block.find("ImponibileImporto").addprevious(element("Arrotondamento", rounding))
        put(block, "ImponibileImporto", "106.50")
        put(block, "Imposta", "23.43")

    found = only(edited("FPR12", edit), "00422")
    assert bool(found) is refused
    if refused:
        assert "= 104.00" in found[0].message and "Arrotondamento" not in found[0].message


def test_00422_rounding_named_when_wrong() -> None:
    def edit(root: Element) -> None:
        block = summary(root, "22.00")
        block.find("ImponibileImporto").addprevious(element("Arrotondamento", "-0.50"))
        put(block, "ImponibileImporto", "106.00")

    assert "+ Arrotondamento -0.50 = 103.50" in one(edited("FPR12", edit), "00422").message


@pytest.mark.parametrize(("second", "refused"), [("44.00", False), ("50.00", True)])
def test_00422_sums_the_summaries_of_one_rate(second: str, refused: bool) -> None:
    """The 22% block split in two (collected and deferred VAT): each alone is not 104.00."""

    def edit(root: Element) -> None:
        block = summary(root, "22.00")
        put(block, "ImponibileImporto", "60.00")
        put(block, "Imposta", "13.20")
        block.addnext(summary_block("22.00", second, "9.68", due="D"))

    found = only(edited("FPR12", edit), "00422")
    assert bool(found) is refused
    if refused:
        message = found[0].message
        assert message.startswith("2 summary blocks 2.2.2 AliquotaIVA 22.00 (XML lines ")
        assert f"ImponibileImporto 60.00 + {second} = 110.00 is not" in message and "= 104.00" in message


def _two_naturas(n4: str, n21: str):
    """Line 4 (10.00) moves from N4 to N2.1, with a summary block of its own."""

    def edit(root: Element) -> None:
        put(line(root, 4), "Natura", "N2.1")
        put(summary(root, "0.00", natura="N4"), "ImponibileImporto", n4)
        summary(root, "0.00", natura="N4").addnext(summary_block("0.00", n21, "0.00", natura="N2.1"))

    return edit


def test_00422_at_rate_zero_groups_by_natura() -> None:
    assert "00422" not in codes(edited("FPR12", _two_naturas("20.00", "10.00")))
    messages = sorted(f.message for f in only(edited("FPR12", _two_naturas("25.00", "5.00")), "00422"))
    assert len(messages) == 2
    assert "summary block 2.2.2 AliquotaIVA 0.00 Natura N2.1 (" in messages[0]
    assert "ImponibileImporto 5.00 is not PrezzoTotale of 1 detail line(s) 10.00 = 10.00" in messages[0]
    assert "summary block 2.2.2 AliquotaIVA 0.00 Natura N4 (" in messages[1]
    assert "ImponibileImporto 25.00 is not PrezzoTotale of 1 detail line(s) 20.00 = 20.00" in messages[1]


def test_00422_leaves_a_rate_nothing_uses_to_00443() -> None:
    root = edited("FPR12", lambda r: summary(r, "10.00").addnext(summary_block("5.00", "10.00", "0.50")))
    assert "00422" not in codes(root)


@pytest.mark.parametrize("body_number", [1, 2])
def test_00422_batch_names_the_body(body_number: int) -> None:
    def edit(root: Element) -> None:
        block = summary(root, "22.00", body_number)
        put(block, "ImponibileImporto", "30.00")
        put(block, "Imposta", "6.60")

    finding = one(edited("batch", edit), "00422")
    assert finding.body == body_number
    assert finding.message.startswith(f"body {body_number}: summary block 2.2.2 AliquotaIVA 22.00")


# --- 00421 Imposta -----------------------------------------------------------------------------


def test_00421_wrong_tax() -> None:
    root = edited("FPR12", lambda r: put(summary(r, "22.00"), "Imposta", "23.00"))
    finding = one(root, "00421")
    assert finding.body == 1 and finding.hint
    assert finding.xpath.endswith("DatiBeniServizi/DatiRiepilogo[1]/Imposta")
    assert finding.message.startswith("summary block 2.2.2 AliquotaIVA 22.00 (XML line ")
    assert (
        "Imposta 23.00 is not ImponibileImporto 104.00 × 22.00% = 22.88 (rounded half-up; tolerance 0.01)"
        in finding.message
    )


@pytest.mark.parametrize(
    ("tax", "refused"), [("22.89", False), ("22.87", False), ("22.90", True), ("22.86", True)]
)
def test_00421_tolerance_is_one_cent(tax: str, refused: bool) -> None:
    root = edited("FPR12", lambda r: put(summary(r, "22.00"), "Imposta", tax))
    assert ("00421" in codes(root)) is refused


@pytest.mark.parametrize(("tax", "refused"), [("10.01", False), ("10.02", False), ("9.99", True)])
def test_00421_rounds_half_up(tax: str, refused: bool) -> None:
    """100.05 × 10% = 10.005: half-up 10.01 (half-even would give 10.00 and take 9.99, refuse 10.02)."""

    def edit(root: Element) -> None:
        put(summary(root, "10.00"), "ImponibileImporto", "100.05")
        put(summary(root, "10.00"), "Imposta", tax)

    found = only(edited("FPR12", edit), "00421")
    assert bool(found) is refused
    if refused:
        assert "ImponibileImporto 100.05 × 10.00% = 10.01" in found[0].message


def test_00421_zero_rate_has_no_tax() -> None:
    assert "00421" not in codes(edited("FPR12", lambda r: put(summary(r, "0.00"), "Imposta", "0.01")))
    root = edited("FPR12", lambda r: put(summary(r, "0.00"), "Imposta", "0.30"))
    assert "AliquotaIVA 0.00 Natura N4" in one(root, "00421").message


@pytest.mark.parametrize("body_number", [1, 2])
def test_00421_batch_names_the_body(body_number: int) -> None:
    root = edited("batch", lambda r: put(summary(r, "22.00", body_number), "Imposta", "9.99"))
    finding = one(root, "00421")
    assert finding.body == body_number
    assert finding.message.startswith(f"body {body_number}: summary block 2.2.2 AliquotaIVA 22.00")


# --- 00414 Natura of a taxed pension-fund block ------------------------------------------------


def _fund_natura(root: Element) -> None:
    fund(root).find("Ritenuta").addnext(element("Natura", "N4"))


def test_00414_natura_on_a_taxed_pension_fund() -> None:
    finding = one(edited("FPR12", _fund_natura), "00414")
    assert finding.body == 1 and finding.hint
    assert finding.xpath.endswith("DatiGeneraliDocumento/DatiCassaPrevidenziale/Natura")
    assert finding.message.startswith("pension-fund block 2.1.1.7 (TC22) (XML line ")
    assert "2.1.1.7.7 Natura N4 is present while 2.1.1.7.5 AliquotaIVA is 22.00, not 0.00" in finding.message


def test_00414_passing_twin_at_rate_zero() -> None:
    """The same Natura on an exempt contribution, with the summaries moved along: nothing to say."""

    def edit(root: Element) -> None:
        _fund_natura(root)
        put(fund(root), "AliquotaIVA", "0.00")
        put(summary(root, "22.00"), "ImponibileImporto", "100.00")
        put(summary(root, "22.00"), "Imposta", "22.00")
        put(summary(root, "0.00"), "ImponibileImporto", "34.00")

    assert mine(edited("FPR12", edit)) == []


def test_00414_batch_names_the_body() -> None:
    def edit(root: Element) -> None:
        added = element(
            "DatiCassaPrevidenziale",
            None,
            element("TipoCassa", "TC22"),
            element("AlCassa", "4.00"),
            element("ImportoContributoCassa", "0.80"),
            element("AliquotaIVA", "22.00"),
            element("Natura", "N4"),
        )
        body(root, 2).find("DatiGenerali/DatiGeneraliDocumento/Numero").addnext(added)
        put(summary(root, "22.00", 2), "ImponibileImporto", "20.80")
        put(summary(root, "22.00", 2), "Imposta", "4.58")

    root = edited("batch", edit)
    finding = one(root, "00414")
    assert finding.body == 2 and finding.message.startswith("body 2: pension-fund block 2.1.1.7 (TC22)")
    assert {f.code for f in mine(root)} == {"00414"}


# --- 00459 RegimeFiscale RF03 ------------------------------------------------------------------


def _regime(value: str):
    return lambda root: put(
        root, "FatturaElettronicaHeader/CedentePrestatore/DatiAnagrafici/RegimeFiscale", value
    )


@pytest.mark.parametrize("kind", ["FPR12", "FPA12"])
def test_00459_rf03_refused(kind: str) -> None:
    findings = run_control("00459", edited(kind, _regime("RF03")), kind)
    assert len(findings) == 1
    finding = findings[0]
    assert finding.body is None and finding.stage == "sdi" and finding.hint
    assert finding.xpath.endswith("CedentePrestatore/DatiAnagrafici/RegimeFiscale")
    assert finding.message.startswith("CedentePrestatore 1.2.1.8 RegimeFiscale is RF03 (XML line 25)")
    assert run_control("00459", edited(kind, _regime("RF01")), kind) == []


def test_00459_schema_refuses_rf03_first() -> None:
    """Schema 1.2.3 no longer lists RF03: the SDI stops at 00200 before the document controls."""
    found = codes(edited("FPR12", _regime("RF03")))
    assert "00200" in found and "00459" not in found


# --- size: linear, capped ----------------------------------------------------------------------


def _long_invoice(count: int, wrong: bool) -> bytes:
    """The FPR12 base with `count` more copies of line 2 (55.00 at 22%), summaries kept right."""
    root = base("FPR12")
    template = line(root, 2)
    anchor = summary(root, "22.00")
    for number in range(6, 6 + count):
        copied = copy.deepcopy(template)
        copied.find("NumeroLinea").text = str(number)
        if wrong:
            copied.find("PrezzoTotale").text = "56.00"
        anchor.addprevious(copied)
    taxable = 104 * 100 + count * (5600 if wrong else 5500)  # cents
    put(anchor, "ImponibileImporto", f"{taxable // 100}.{taxable % 100:02d}")
    tax = (taxable * 22 + 50) // 100
    put(anchor, "Imposta", f"{tax // 100}.{tax % 100:02d}")
    return xml(root)


@pytest.mark.parametrize("wrong", [False, True])
def test_two_thousand_lines_are_quick_and_capped(wrong: bool) -> None:
    report = check(_long_invoice(2000, wrong), CheckOptions(received_date=RECEIVED_DATE))
    started = time.perf_counter()
    findings = [f for f in check_sdi(report, received_date=RECEIVED_DATE) if f.code in MINE]
    assert time.perf_counter() - started < 2.0  # about 0.02 s: one pass over the lines per control
    if not wrong:
        assert findings == []
        return
    assert [f.code for f in findings] == ["00423"] * MAX_PER_BODY
    assert findings[-1].message.endswith(f"(and {2000 - MAX_PER_BODY} more like this in the same body)")
    assert "PrezzoTotale 56.00 is not PrezzoUnitario 55.00 × Quantita 1.00 = 55.00" in findings[0].message
