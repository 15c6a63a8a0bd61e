"""`Natura` against the VAT rate, ordinary format (§7.3: 00400, 00401, 00413, 00420, 00429, 00430,
00445). The simplified-format variants live in `simplified.py`.

Natura says why no VAT is charged, so it belongs exactly to the zero rates. 00420's second half
("Natura required when 2.2.2.1 is 0.00, forbidden otherwise") is the same test as 00429/00430:
those report it, and 00420 reports only the N6 / split-payment clash.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import (
    NATURA_AT,
    ZERO,
    body_findings,
    holder_label,
    line_label,
    rate_text,
    text,
    where,
)
from varco.fatturapa.rules.facts import (
    LINE_NATURA,
    NATURA,
    PENSION_FUNDS,
    SUMMARY_NATURA,
    SUMMARY_ZERO_RATE,
    ZERO_RATE,
    document_facts,
)
from varco.fatturapa.rules.registry import ORDINARY, RuleContext, RuleSpec, rule

REVERSE_CHARGE_INTEGRATION = "TD16"  # 00401/00430: Natura allowed on a non-zero rate
GENERIC_NATURA_END = date(2021, 1, 1)  # 00445: from this invoice date N2, N3, N6 need a sub-code
GENERIC_NATURA = frozenset({"N2", "N3", "N6"})


@rule(
    "00400",
    "2.2.1.14 <Natura> required when 2.2.1.12 <AliquotaIVA> is 0.00",
    "On a zero-rate line state why no VAT is due in 2.2.1.14 Natura (e.g. N2.2, N3.1, N4).",
    formats=ORDINARY,
    needs=ZERO_RATE,
)
def line_natura_required(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00400: a zero-rate detail line must say why (Natura)."""
    for body in document_facts(ctx).bodies:
        if ZERO not in body.rates_in_use:  # no zero-rate line (nor pension-fund block)
            continue
        offenders = [
            (
                line.element,
                f"{line_label(line.element)}: 2.2.1.14 <Natura> is missing while 2.2.1.12 <AliquotaIVA> "
                f"is 0.00 ({where(line.element)})",
            )
            for line in body.lines
            if line.rate == ZERO and line.natura_element is None
        ]
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00401",
    "2.2.1.14 <Natura> forbidden when the rate is not 0.00, except when the document type is TD16",
    "Remove 2.2.1.14 Natura from lines that charge VAT, or set their rate to 0.00.",
    formats=ORDINARY,
    needs=LINE_NATURA,
)
def line_natura_forbidden(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00401: a taxed detail line carries no Natura (a TD16 reverse-charge integration may)."""
    for body in document_facts(ctx).bodies:
        if not body.line_natura or body.facts.type == REVERSE_CHARGE_INTEGRATION:
            continue
        offenders = []
        for line in body.lines:
            rate, natura = line.rate, line.natura_element
            if rate is not None and rate != ZERO and natura is not None:
                offenders.append(
                    (
                        natura,
                        f"{line_label(line.element)}: 2.2.1.14 <Natura> {line.natura} is not allowed with "
                        f"2.2.1.12 <AliquotaIVA> {rate_text(rate)} ({where(natura)})",
                    )
                )
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00413",
    "2.1.1.7.7 <Natura> required when 2.1.1.7.5 <AliquotaIVA> is 0.00, forbidden otherwise",
    "In the pension-fund block give Natura exactly when its AliquotaIVA is 0.00.",
    formats=ORDINARY,
    needs=PENSION_FUNDS,
)
def pension_fund_natura(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00413: the pension-fund contribution follows the same Natura/rate pairing as lines."""
    for body in document_facts(ctx).bodies:
        if not body.facts.fund_holders:
            continue
        offenders = []
        for holder in body.facts.fund_holders:
            fund, rate, natura = holder.element, holder.rate, holder.natura
            label = f"pension-fund block 2.1.1.7 ({text(fund, 'TipoCassa')})"
            if rate == ZERO and natura is None:
                offenders.append(
                    (
                        fund,
                        f"{label}: 2.1.1.7.7 <Natura> is missing while 2.1.1.7.5 <AliquotaIVA> is 0.00 "
                        f"({where(fund)})",
                    )
                )
            elif rate is not None and rate != ZERO and natura is not None:
                offenders.append(
                    (
                        fund,
                        f"{label}: 2.1.1.7.7 <Natura> {natura} is not allowed with 2.1.1.7.5 <AliquotaIVA> "
                        f"{rate_text(rate)} ({where(fund)})",
                    )
                )
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00420",
    "If 2.2.2.2 <Natura> is N6, 2.2.2.7 <EsigibilitaIVA> must not be S; <Natura> required when 2.2.2.1 rate "
    "is 0.00, forbidden otherwise",
    "Reverse charge (N6.x) and split payment (EsigibilitaIVA S) exclude each other: use I or D.",
    formats=ORDINARY,
    needs=SUMMARY_NATURA,
)
def reverse_charge_not_split(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00420: reverse charge (N6 and its sub-codes N6.1-N6.9) cannot be split payment."""
    for body in document_facts(ctx).bodies:
        offenders = []
        for holder in body.facts.summary_holders:
            natura, element = holder.natura, holder.esigibilita_element
            if natura and natura.startswith("N6") and text(element) == "S":
                offenders.append(
                    (
                        element,
                        f"summary block 2.2.2 with 2.2.2.2 <Natura> {natura} has 2.2.2.7 <EsigibilitaIVA> S "
                        f"(split payment) ({where(element)})",
                    )
                )
        if offenders:
            yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00429",
    "2.2.2.2 <Natura> required when 2.2.2.1 rate is zero",
    "In the zero-rate summary block state why no VAT is due in 2.2.2.2 Natura.",
    formats=ORDINARY,
    needs=SUMMARY_ZERO_RATE,
)
def summary_natura_required(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00429: a zero-rate summary block must say why (Natura)."""
    for body in document_facts(ctx).bodies:
        offenders = [
            (
                holder.element,
                f"summary block 2.2.2 with 2.2.2.1 <AliquotaIVA> 0.00 has no 2.2.2.2 <Natura> "
                f"({where(holder.element)})",
            )
            for holder in body.facts.summary_holders
            if holder.rate == ZERO and holder.natura_element is None
        ]
        if offenders:
            yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00430",
    "2.2.2.2 <Natura> forbidden when 2.2.2.1 rate is not zero, except for TD16",
    "Remove 2.2.2.2 Natura from summary blocks that charge VAT.",
    formats=ORDINARY,
    needs=SUMMARY_NATURA,
)
def summary_natura_forbidden(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00430: a taxed summary block carries no Natura (a TD16 reverse-charge integration may)."""
    for body in document_facts(ctx).bodies:
        if body.facts.type == REVERSE_CHARGE_INTEGRATION:
            continue
        offenders = []
        for holder in body.facts.summary_holders:
            rate, natura = holder.rate, holder.natura_element
            if rate is not None and rate != ZERO and natura is not None:
                offenders.append(
                    (
                        natura,
                        f"summary block 2.2.2 with 2.2.2.1 <AliquotaIVA> {rate_text(rate)} has "
                        f"2.2.2.2 <Natura> {text(natura)} ({where(natura)})",
                    )
                )
        if offenders:
            yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00445",
    "From 1 January 2021 generic <Natura> values N2, N3, N6 are refused (for simplified invoices N2, N3)",
    "Use the sub-code (N2.1/N2.2, N3.1-N3.6, N6.1-N6.9) instead of the generic N2, N3 or N6.",
    formats=ORDINARY,
    needs=NATURA,
)
def generic_natura(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00445: since 2021 the generic N2/N3/N6 codes are too vague for the pre-filled VAT registers."""
    for body in document_facts(ctx).bodies:
        issued = body.facts.date
        if issued is None or issued < GENERIC_NATURA_END:
            continue
        if GENERIC_NATURA.isdisjoint(body.naturas_in_use) and GENERIC_NATURA.isdisjoint(body.summary_naturas):
            continue  # the usual case: no generic code anywhere
        holders = [(line.element, line.natura, line.natura_element) for line in body.lines]
        holders += [(holder.element, holder.natura, holder.natura_element) for holder in body.holders()]
        offenders = []
        for holder, value, natura in holders:
            if natura is not None and value in GENERIC_NATURA:
                offenders.append(
                    (
                        natura,
                        f"{holder_label(holder, NATURA_AT)} <Natura> {value} is a generic code, refused for "
                        f"invoices dated {issued} (from 2021-01-01) ({where(natura)})",
                    )
                )
        yield from body_findings(ctx, spec, body.index, offenders)
