"""Rules of the simplified invoice, FSM10 (§7.3: 00400, 00401, 00424, 00445 variants and 00460).

FSM10 has no detail lines or summary blocks: each 2.2 DatiBeniServizi carries 2.2.2 Importo,
2.2.3 DatiIVA (2.2.3.1 Imposta and/or 2.2.3.2 Aliquota, both optional) and 2.2.4 Natura. Its VAT
is zero when every value given in 2.2.3 is zero and at least one is given; it is charged when one
of them is above zero.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import (
    LOOKUPS,
    ZERO,
    Element,
    bodies,
    body_facts,
    body_findings,
    body_prefix,
    decimal,
    doc_date,
    rate_text,
    text,
    where,
)
from varco.fatturapa.rules.async_rules.natura import GENERIC_NATURA_END
from varco.fatturapa.rules.registry import SIMPLIFIED, RuleContext, RuleSpec, rule

SIMPLIFIED_LIMIT = Decimal("400.00")  # DPR 633/72 art. 21-bis, DM 10 May 2019
SIMPLIFIED_GENERIC_NATURA = frozenset({"N2", "N3"})  # FSM10 has no N6


@dataclass(slots=True)
class GoodsFacts:
    """What the rules read of one 2.2 DatiBeniServizi block, in one walk over its children (the
    first of each, as `find` reads them; Imposta and Aliquota from the first 2.2.3 DatiIVA that
    has one)."""

    element: Element
    amount_element: Element | None = None  # 2.2.2 Importo
    amount: Decimal | None = None
    tax_element: Element | None = None  # 2.2.3.1 Imposta
    tax: Decimal | None = None
    rate_element: Element | None = None  # 2.2.3.2 Aliquota
    rate: Decimal | None = None
    natura_element: Element | None = None  # 2.2.4 Natura

    def vat_values(self) -> list[Decimal]:
        """The values given in 2.2.3.1 Imposta and 2.2.3.2 Aliquota."""
        return [value for value in (self.tax, self.rate) if value is not None]

    def vat_text(self) -> str:
        parts = []
        if (tax := text(self.tax_element)) is not None:
            parts.append(f"2.2.3.1 <Imposta> {tax}")
        if (rate := text(self.rate_element)) is not None:
            parts.append(f"2.2.3.2 <Aliquota> {rate}")
        return " and ".join(parts)


def _goods_facts(goods: Element) -> GoodsFacts:
    facts = GoodsFacts(goods)
    # Plain walks over the block's few children: lxml's tag-filtered iterators cost more to set up.
    for item in goods:
        tag = item.tag
        if tag == "Importo":
            if facts.amount_element is None:
                facts.amount_element = item
        elif tag == "Natura":
            if facts.natura_element is None:
                facts.natura_element = item
        elif tag == "DatiIVA":
            tax, rate = facts.tax_element, facts.rate_element
            for value in item:  # the first Imposta and the first Aliquota of this DatiIVA
                name = value.tag
                if name == "Imposta":
                    if tax is None:
                        facts.tax_element = tax = value
                elif name == "Aliquota" and rate is None:
                    facts.rate_element = rate = value
    facts.amount = decimal(text(facts.amount_element))
    facts.tax = decimal(text(facts.tax_element))
    facts.rate = decimal(text(facts.rate_element))
    return facts


def goods_facts(body: Element) -> list[GoodsFacts]:
    """The facts of each 2.2 DatiBeniServizi block of a simplified body (found once per document
    run: the invoice summary and five rules read them)."""
    cache = LOOKUPS.get()
    key = ("goods", body)
    found = cache.get(key) if cache is not None else None
    if found is None:
        found = [_goods_facts(goods) for goods in body_facts(body).goods]
        if cache is not None:
            cache[key] = found
    return found  # type: ignore[return-value]


def _goods(body: Element) -> Iterator[tuple[int, GoodsFacts]]:
    """The facts of each 2.2 DatiBeniServizi block with its 1-based position."""
    return enumerate(goods_facts(body), start=1)


@rule(
    "00400",
    "2.2.4 <Natura> required when 2.2.3 VAT (2.2.3.2 <Aliquota> / 2.2.3.1 <Imposta>) is zero (simplified)",
    "On a block without VAT state why in 2.2.4 Natura (e.g. N2.2, N3.1, N4).",
    formats=SIMPLIFIED,
)
def natura_required(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00400 (FSM10): a block without VAT must say why (Natura)."""
    for index, body in bodies(ctx):
        offenders = []
        for position, goods in _goods(body):
            values = goods.vat_values()
            if values and all(value == ZERO for value in values) and goods.natura_element is None:
                offenders.append(
                    (
                        goods.element,
                        f"block 2.2 #{position}: 2.2.4 <Natura> is missing although no VAT is charged "
                        f"({goods.vat_text()}) ({where(goods.element)})",
                    )
                )
        yield from body_findings(ctx, spec, index, offenders)


@rule(
    "00401",
    "2.2.4 <Natura> forbidden when 2.2.3 VAT (2.2.3.2 <Aliquota> / 2.2.3.1 <Imposta>) is not zero "
    "(simplified)",
    "Remove 2.2.4 Natura from blocks that charge VAT.",
    formats=SIMPLIFIED,
)
def natura_forbidden(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00401 (FSM10): a block that charges VAT carries no Natura (TD16 does not exist in FSM10)."""
    for index, body in bodies(ctx):
        offenders = []
        for position, goods in _goods(body):
            natura = goods.natura_element
            if natura is not None and any(value > ZERO for value in goods.vat_values()):
                offenders.append(
                    (
                        natura,
                        f"block 2.2 #{position}: 2.2.4 <Natura> {text(natura)} is not allowed with "
                        f"{goods.vat_text()} ({where(natura)})",
                    )
                )
        yield from body_findings(ctx, spec, index, offenders)


@rule(
    "00424",
    "2.2.3.2 <Aliquota> must be a percentage (22.00 not 0.22) (simplified)",
    "Write the VAT rate as a percentage: 22.00, not 0.22.",
    formats=SIMPLIFIED,
)
def rate_is_percentage(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00424 (FSM10): a rate strictly between 0 and 1 is a fraction written where a percentage belongs."""
    for index, body in bodies(ctx):
        offenders = []
        for position, goods in _goods(body):
            rate = goods.rate
            if rate is not None and ZERO < rate < 1:
                element = goods.rate_element
                offenders.append(
                    (
                        element,
                        f"block 2.2 #{position}: 2.2.3.2 <Aliquota> {rate_text(rate)} looks like a fraction; "
                        f"write the percentage ({rate_text(rate * 100)}) ({where(element)})",
                    )
                )
        yield from body_findings(ctx, spec, index, offenders)


@rule(
    "00445",
    "From 1 January 2021 generic 2.2.4 <Natura> values N2, N3 are refused (simplified)",
    "Use the sub-code (N2.1/N2.2, N3.1-N3.6) instead of the generic N2 or N3.",
    formats=SIMPLIFIED,
)
def generic_natura(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00445 (FSM10): since 2021 the generic N2 and N3 need their sub-codes."""
    for index, body in bodies(ctx):
        _, issued = doc_date(body)
        if issued is None or issued < GENERIC_NATURA_END:
            continue
        offenders = []
        for position, goods in _goods(body):
            natura = goods.natura_element
            if natura is not None and text(natura) in SIMPLIFIED_GENERIC_NATURA:
                offenders.append(
                    (
                        natura,
                        f"block 2.2 #{position}: 2.2.4 <Natura> {text(natura)} is a generic code, refused "
                        f"for invoices dated {issued} (from 2021-01-01) ({where(natura)})",
                    )
                )
        yield from body_findings(ctx, spec, index, offenders)


@rule(
    "00460",
    "Simplified invoice total (2.2.2 <Importo>, summed over blocks) must not exceed 400.00 euros unless "
    "block 2.1.2 <DatiFatturaRettificata> is present",
    "Above 400.00 euros issue an ordinary invoice (FPR12), unless this corrects an earlier invoice.",
    formats=SIMPLIFIED,
)
def total_within_limit(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00460: simplified invoices are for small amounts; corrections of one are exempt."""
    for index, body in bodies(ctx):
        if body_facts(body).corrected is not None:
            continue
        total = sum((goods.amount or ZERO for _, goods in _goods(body)), ZERO)
        if total > SIMPLIFIED_LIMIT:
            element = body.find("DatiBeniServizi")
            yield ctx.finding(
                spec,
                f"{body_prefix(ctx, index)}the 2.2.2 <Importo> values add up to {total:.2f} euros, above the "
                f"{SIMPLIFIED_LIMIT} limit of a simplified invoice without 2.1.2 <DatiFatturaRettificata> "
                f"({where(element)})",
                element,
                body=index,
            )
