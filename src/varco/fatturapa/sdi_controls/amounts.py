"""SDI controls on amounts and abolished values, ordinary format (see docs/sdi-controls.md): 00421
(Imposta), 00422 (ImponibileImporto), 00423 (PrezzoTotale), 00414 (Natura of a taxed pension-fund
block), 00459 (RegimeFiscale RF03).

Decimal arithmetic only, one pass over the lines per control, values read through the shared
look-ups (`line_facts`, `decimal_at`) so that 00422 reuses what 00423 read.

Choices where the sources leave room (docs/sdi-controls.md):
- 00423: a line discount given by Importo is read two ways, since the specification applies
  2.2.1.10 to the unit price while some issuers apply the amount to the line total; PrezzoTotale
  may match either. Percentages give the same total both ways. When a discount has both
  Percentuale and Importo the Importo counts. A line with a discount giving neither is left to
  the contract's 00438.
- 00422: summaries are grouped by rate (and, at rate zero, by Natura) and compared as a group; a
  group no line nor pension-fund block contributes to is left to the contract's 00443 / 00444.
- 00414: the contract folds this half into its 00413, which reports the same block too.
- 00459: version 1.2.3 of the schema no longer lists RF03, so a file carrying it is refused as
  00200 before the document controls run; the control stays for older or lenient readers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, localcontext

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import (
    ZERO,
    Element,
    bodies,
    body_findings,
    child,
    decimal,
    decimal_at,
    line_facts,
    line_label,
    pension_funds,
    rate_text,
    summaries,
    text,
    where,
)
from varco.fatturapa.rules.registry import ORDINARY
from varco.fatturapa.sdi_controls.registry import ControlSpec, SdiContext, control

CENT = Decimal("0.01")
HUNDRED = Decimal(100)
ONE = Decimal(1)
LINE_TOLERANCE = CENT  # 00423: PrezzoTotale
TAX_TOLERANCE = CENT  # 00421: Imposta
TAXABLE_TOLERANCE = Decimal("1.00")  # 00422: ImponibileImporto
PRECISION = 60  # digits: 8-decimal prices times 8-decimal quantities stay exact
ABOLISHED_REGIME = "RF03"


def amount(value: Decimal) -> str:
    """`45.00`, or every decimal when the value has more than two (`5.005`)."""
    if value == value.quantize(CENT):
        return f"{value.quantize(CENT):f}"
    return f"{value.normalize():f}"


# 00423 ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One 2.2.1.10 ScontoMaggiorazione: sign -1 for SC, +1 for MG; Importo wins over Percentuale."""

    sign: int
    percent: Decimal | None
    value: Decimal | None

    def __str__(self) -> str:
        kind = "SC" if self.sign < 0 else "MG"
        return f"{kind} {amount(self.value)}" if self.value is not None else f"{kind} {amount(self.percent)}%"


def _steps(discounts: tuple[Element, ...]) -> list[Step] | None:
    """The line's discounts in document order, None when one gives neither amount (00438's case)."""
    steps = []
    for discount in discounts:
        value, percent = decimal_at(discount, "Importo"), decimal_at(discount, "Percentuale")
        if value is None and percent is None:
            return None
        steps.append(Step(-1 if text(discount, "Tipo") == "SC" else 1, percent, value))
    return steps


def expected_totals(unit: Decimal, quantity: Decimal, steps: list[Step]) -> tuple[Decimal, Decimal]:
    """PrezzoTotale with the discounts on the unit price, and with them on the line total."""
    per_unit, on_line = unit, unit * quantity
    for step in steps:
        if step.value is not None:
            per_unit += step.sign * step.value
            on_line += step.sign * step.value
        else:
            per_unit += step.sign * per_unit * step.percent / HUNDRED
            on_line += step.sign * on_line * step.percent / HUNDRED
    return per_unit * quantity, on_line


@control(
    "00423",
    "2.2.1.11 <PrezzoTotale> non calcolato secondo le regole definite nelle specifiche tecniche",
    "Write PrezzoTotale as PrezzoUnitario × Quantita after the line's discounts and surcharges, to the cent.",
    formats=ORDINARY,
)
def line_total(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00423: PrezzoTotale = PrezzoUnitario × Quantita (1 when absent), discounts applied in order."""
    with localcontext() as decimals:
        decimals.prec = PRECISION
        for index, body in bodies(ctx):
            offenders = []
            for line in line_facts(body):
                element = line.element
                unit, total = decimal(line.unit_price), decimal(line.total)
                steps = _steps(line.discounts) if line.discounts else []
                if unit is None or total is None or steps is None:
                    continue
                quantity = decimal(line.quantity)
                per_unit, on_line = expected_totals(unit, quantity if quantity is not None else ONE, steps)
                if abs(total - per_unit) <= LINE_TOLERANCE or abs(total - on_line) <= LINE_TOLERANCE:
                    continue
                shown_quantity = amount(quantity) if quantity is not None else "1 (absent)"
                formula = f"PrezzoUnitario {amount(unit)} × Quantita {shown_quantity}"
                if steps:
                    formula += ", then " + ", ".join(str(step) for step in steps)
                expected = amount(per_unit)
                if on_line != per_unit:
                    expected += f" (amounts per unit) or {amount(on_line)} (amounts on the line total)"
                offenders.append(
                    (
                        line.total_element,
                        f"{line_label(element)} ({where(element)}): PrezzoTotale {amount(total)} is not "
                        f"{formula} = {expected} (tolerance {amount(LINE_TOLERANCE)})",
                    )
                )
            yield from body_findings(ctx, spec, index, offenders)


# 00422 ------------------------------------------------------------------------------------------


def _group(rate: Decimal, natura: str | None) -> tuple[Decimal, str | None]:
    """The summary group of a rate and Natura: Natura tells groups apart only at rate zero."""
    return rate, natura if rate == ZERO else None


def _group_label(key: tuple[Decimal, str | None]) -> str:
    rate, natura = key
    return f"AliquotaIVA {rate_text(rate)}" + (f" Natura {natura}" if natura else "")


@dataclass(slots=True)
class Group:
    """The summary blocks of one rate (and Natura at rate zero), and what the body puts in them."""

    blocks: list[tuple[Element, Decimal]] = field(default_factory=list)  # (summary, ImponibileImporto)
    rounding: Decimal | None = None  # sum of 2.2.2.4 Arrotondamento, None when no block has one
    lines: Decimal = ZERO
    line_count: int = 0
    funds: Decimal = ZERO
    fund_count: int = 0

    @property
    def declared(self) -> Decimal:
        return sum((taxable for _, taxable in self.blocks), ZERO)

    @property
    def expected(self) -> Decimal:
        return self.lines + self.funds + (self.rounding or ZERO)


def _groups(body: Element) -> dict[tuple[Decimal, str | None], Group]:
    groups: dict[tuple[Decimal, str | None], Group] = {}
    for summary in summaries(body):
        rate, taxable = decimal_at(summary, "AliquotaIVA"), decimal_at(summary, "ImponibileImporto")
        if rate is None or taxable is None:
            continue
        group = groups.setdefault(_group(rate, text(summary, "Natura")), Group())
        group.blocks.append((summary, taxable))
        rounding = decimal_at(summary, "Arrotondamento")
        if rounding is not None:
            group.rounding = (group.rounding or ZERO) + rounding
    for line in line_facts(body):
        total = decimal(line.total)
        if line.rate is None or total is None:
            continue
        group = groups.get(_group(line.rate, line.natura))
        if group is not None:
            group.lines += total
            group.line_count += 1
    for fund in pension_funds(body):
        rate, contribution = decimal_at(fund, "AliquotaIVA"), decimal_at(fund, "ImportoContributoCassa")
        if rate is None or contribution is None:
            continue
        group = groups.get(_group(rate, text(fund, "Natura")))
        if group is not None:
            group.funds += contribution
            group.fund_count += 1
    return groups


def _taxable_message(key: tuple[Decimal, str | None], group: Group) -> str:
    first = group.blocks[0][0]
    if len(group.blocks) == 1:
        declared = f"ImponibileImporto {amount(group.declared)}"
        head = f"summary block 2.2.2 {_group_label(key)} ({where(first)})"
    else:
        lines = ", ".join(str(summary.sourceline or "?") for summary, _ in group.blocks)
        parts = " + ".join(amount(taxable) for _, taxable in group.blocks)
        declared = f"ImponibileImporto {parts} = {amount(group.declared)}"
        head = f"{len(group.blocks)} summary blocks 2.2.2 {_group_label(key)} (XML lines {lines})"
    terms = [f"PrezzoTotale of {group.line_count} detail line(s) {amount(group.lines)}"]
    if group.fund_count:
        funds = f"{group.fund_count} pension-fund block(s)"
        terms.append(f"ImportoContributoCassa of {funds} {amount(group.funds)}")
    if group.rounding is not None:
        terms.append(f"Arrotondamento {amount(group.rounding)}")
    return (
        f"{head}: {declared} is not {' + '.join(terms)} = {amount(group.expected)} "
        f"(tolerance {amount(TAXABLE_TOLERANCE)})"
    )


@control(
    "00422",
    "2.2.2.5 <ImponibileImporto> non calcolato secondo le regole definite nelle specifiche tecniche",
    "Make ImponibileImporto the sum of the rate's line totals and pension-fund contributions, plus "
    "Arrotondamento.",
    formats=ORDINARY,
)
def summary_taxable(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00422: per rate (and Natura at rate zero) the summaries' ImponibileImporto is the lines'
    PrezzoTotale plus the pension-fund contributions plus Arrotondamento, within one euro."""
    for index, body in bodies(ctx):
        offenders = []
        for key, group in _groups(body).items():
            if not (group.line_count or group.fund_count):
                continue  # a rate or Natura nothing uses: the contract's 00443 / 00444
            if abs(group.declared - group.expected) > TAXABLE_TOLERANCE:
                first = group.blocks[0][0]
                offenders.append((child(first, "ImponibileImporto"), _taxable_message(key, group)))
        yield from body_findings(ctx, spec, index, offenders)


# 00421 ------------------------------------------------------------------------------------------


@control(
    "00421",
    "2.2.2.6 <Imposta> non calcolato secondo le regole definite nelle specifiche tecniche",
    "Write Imposta as ImponibileImporto × AliquotaIVA / 100, rounded half-up to the cent.",
    formats=ORDINARY,
)
def summary_tax(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00421: Imposta = ImponibileImporto × AliquotaIVA / 100 rounded half-up, within one cent."""
    with localcontext() as decimals:
        decimals.prec = PRECISION
        for index, body in bodies(ctx):
            offenders = []
            for summary in summaries(body):
                rate, taxable = decimal_at(summary, "AliquotaIVA"), decimal_at(summary, "ImponibileImporto")
                tax = decimal_at(summary, "Imposta")
                if rate is None or taxable is None or tax is None:
                    continue
                expected = (taxable * rate / HUNDRED).quantize(CENT, rounding=ROUND_HALF_UP)
                if abs(tax - expected) > TAX_TOLERANCE:
                    natura = text(summary, "Natura")
                    offenders.append(
                        (
                            child(summary, "Imposta"),
                            f"summary block 2.2.2 {_group_label((rate, natura))} ({where(summary)}): "
                            f"Imposta {amount(tax)} is not ImponibileImporto {amount(taxable)} × "
                            f"{rate_text(rate)}% = {amount(expected)} (rounded half-up; tolerance "
                            f"{amount(TAX_TOLERANCE)})",
                        )
                    )
            yield from body_findings(ctx, spec, index, offenders)


# 00414 ------------------------------------------------------------------------------------------


@control(
    "00414",
    "2.1.1.7.7 <Natura> presente a fronte di 2.1.1.7.5 <AliquotaIVA> diversa da zero",
    "Remove Natura from the pension-fund block that charges VAT, or set its AliquotaIVA to 0.00.",
    formats=ORDINARY,
)
def pension_fund_natura_on_taxed(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00414: a pension-fund contribution that charges VAT carries no Natura."""
    for index, body in bodies(ctx):
        offenders = []
        for fund in pension_funds(body):
            rate, natura = decimal_at(fund, "AliquotaIVA"), child(fund, "Natura")
            if rate is not None and rate != ZERO and natura is not None:
                offenders.append(
                    (
                        natura,
                        f"pension-fund block 2.1.1.7 ({text(fund, 'TipoCassa')}) ({where(fund)}): "
                        f"2.1.1.7.7 Natura {text(natura)} is present while 2.1.1.7.5 AliquotaIVA is "
                        f"{rate_text(rate)}, not 0.00",
                    )
                )
        yield from body_findings(ctx, spec, index, offenders)


# 00459 ------------------------------------------------------------------------------------------


@control(
    "00459",
    "Valore RF03 non ammesso per 1.2.1.8 <RegimeFiscale>",
    "RF03 was abolished: give the supplier's current tax regime in 1.2.1.8 (e.g. RF01, RF19).",
    formats=ORDINARY,
)
def abolished_regime(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00459: the tax regime RF03 no longer exists."""
    element = ctx.root.find("FatturaElettronicaHeader/CedentePrestatore/DatiAnagrafici/RegimeFiscale")
    if text(element) == ABOLISHED_REGIME:
        yield spec.finding(
            ctx,
            f"CedentePrestatore 1.2.1.8 RegimeFiscale is {ABOLISHED_REGIME} ({where(element)}), a value "
            "no longer allowed",
            element,
        )
