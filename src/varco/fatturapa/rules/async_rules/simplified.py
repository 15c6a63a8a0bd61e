"""Rules of the simplified invoice, FSM10 (§7.3: 00400, 00401, 00424, 00445 variants and 00460).

FSM10 has no detail lines or summary blocks: each 2.2 DatiBeniServizi carries 2.2.2 Importo,
2.2.3 DatiIVA (2.2.3.1 Imposta and/or 2.2.3.2 Aliquota, both optional) and 2.2.4 Natura. Its VAT
is zero when every value given in 2.2.3 is zero and at least one is given; it is charged when one
of them is above zero.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._goods import GoodsFacts, _goods_facts  # noqa: F401  (once defined here)
from varco.fatturapa.rules.async_rules._xml import ZERO, body_findings, body_prefix, rate_text, text, where
from varco.fatturapa.rules.async_rules.natura import GENERIC_NATURA_END
from varco.fatturapa.rules.facts import FRACTION_RATE, NATURA, ZERO_RATE, document_facts
from varco.fatturapa.rules.registry import SIMPLIFIED, RuleContext, RuleSpec, rule

SIMPLIFIED_LIMIT = Decimal("400.00")  # DPR 633/72 art. 21-bis, DM 10 May 2019
SIMPLIFIED_GENERIC_NATURA = frozenset({"N2", "N3"})  # FSM10 has no N6


def _without_vat(goods: GoodsFacts) -> bool:
    """No VAT charged: 2.2.3 gives Imposta and/or Aliquota, and every value given is zero."""
    tax, rate = goods.tax, goods.rate
    if tax is None and rate is None:
        return False
    return (tax is None or tax == ZERO) and (rate is None or rate == ZERO)


def _with_vat(goods: GoodsFacts) -> bool:
    """VAT charged: a value given in 2.2.3 is above zero."""
    tax, rate = goods.tax, goods.rate
    return (tax is not None and tax > ZERO) or (rate is not None and rate > ZERO)


@rule(
    "00400",
    "2.2.4 <Natura> required when 2.2.3 VAT (2.2.3.2 <Aliquota> / 2.2.3.1 <Imposta>) is zero (simplified)",
    "On a block without VAT state why in 2.2.4 Natura (e.g. N2.2, N3.1, N4).",
    formats=SIMPLIFIED,
    needs=ZERO_RATE,
)
def natura_required(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00400 (FSM10): a block without VAT must say why (Natura)."""
    for body in document_facts(ctx).bodies:
        offenders = [
            (
                goods.element,
                f"block 2.2 #{position}: 2.2.4 <Natura> is missing although no VAT is charged "
                f"({goods.vat_text()}) ({where(goods.element)})",
            )
            for position, goods in enumerate(body.goods, start=1)
            if goods.natura_element is None and _without_vat(goods)
        ]
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00401",
    "2.2.4 <Natura> forbidden when 2.2.3 VAT (2.2.3.2 <Aliquota> / 2.2.3.1 <Imposta>) is not zero "
    "(simplified)",
    "Remove 2.2.4 Natura from blocks that charge VAT.",
    formats=SIMPLIFIED,
    needs=NATURA,
)
def natura_forbidden(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00401 (FSM10): a block that charges VAT carries no Natura (TD16 does not exist in FSM10)."""
    for body in document_facts(ctx).bodies:
        offenders = [
            (
                goods.natura_element,
                f"block 2.2 #{position}: 2.2.4 <Natura> {text(goods.natura_element)} is not allowed with "
                f"{goods.vat_text()} ({where(goods.natura_element)})",
            )
            for position, goods in enumerate(body.goods, start=1)
            if goods.natura_element is not None and _with_vat(goods)
        ]
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00424",
    "2.2.3.2 <Aliquota> must be a percentage (22.00 not 0.22) (simplified)",
    "Write the VAT rate as a percentage: 22.00, not 0.22.",
    formats=SIMPLIFIED,
    needs=FRACTION_RATE,
)
def rate_is_percentage(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00424 (FSM10): a rate strictly between 0 and 1 is a fraction written where a percentage belongs."""
    for body in document_facts(ctx).bodies:
        offenders = [
            (
                goods.rate_element,
                f"block 2.2 #{position}: 2.2.3.2 <Aliquota> {rate_text(goods.rate)} looks like a fraction; "
                f"write the percentage ({rate_text(goods.rate * 100)}) ({where(goods.rate_element)})",
            )
            for position, goods in enumerate(body.goods, start=1)
            if goods.rate is not None and ZERO < goods.rate < 1
        ]
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00445",
    "From 1 January 2021 generic 2.2.4 <Natura> values N2, N3 are refused (simplified)",
    "Use the sub-code (N2.1/N2.2, N3.1-N3.6) instead of the generic N2 or N3.",
    formats=SIMPLIFIED,
    needs=NATURA,
)
def generic_natura(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00445 (FSM10): since 2021 the generic N2 and N3 need their sub-codes."""
    for body in document_facts(ctx).bodies:
        issued = body.facts.date
        if issued is None or issued < GENERIC_NATURA_END:
            continue
        offenders = [
            (
                goods.natura_element,
                f"block 2.2 #{position}: 2.2.4 <Natura> {text(goods.natura_element)} is a generic code, "
                f"refused for invoices dated {issued} (from 2021-01-01) ({where(goods.natura_element)})",
            )
            for position, goods in enumerate(body.goods, start=1)
            if goods.natura_element is not None and text(goods.natura_element) in SIMPLIFIED_GENERIC_NATURA
        ]
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00460",
    "Simplified invoice total (2.2.2 <Importo>, summed over blocks) must not exceed 400.00 euros unless "
    "block 2.1.2 <DatiFatturaRettificata> is present",
    "Above 400.00 euros issue an ordinary invoice (FPR12), unless this corrects an earlier invoice.",
    formats=SIMPLIFIED,
)
def total_within_limit(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00460: simplified invoices are for small amounts; corrections of one are exempt."""
    for body in document_facts(ctx).bodies:
        if body.facts.corrected is not None:
            continue
        total = ZERO
        for goods in body.goods:
            if goods.amount is not None:
                total += goods.amount
        if total > SIMPLIFIED_LIMIT:
            element = body.element.find("DatiBeniServizi")
            yield ctx.finding(
                spec,
                f"{body_prefix(ctx, body.index)}the 2.2.2 <Importo> values add up to {total:.2f} euros, "
                f"above the {SIMPLIFIED_LIMIT} limit of a simplified invoice without 2.1.2 "
                f"<DatiFatturaRettificata> ({where(element)})",
                element,
                body=body.index,
            )
