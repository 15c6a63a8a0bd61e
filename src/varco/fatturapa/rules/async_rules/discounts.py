"""Discounts and surcharges (§7.3: 00437, 00438), ordinary format."""

from __future__ import annotations

from collections.abc import Iterator

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import Element, body_findings, child, line_label, text, where
from varco.fatturapa.rules.facts import DOCUMENT_DISCOUNTS, LINE_DISCOUNTS, document_facts
from varco.fatturapa.rules.registry import ORDINARY, RuleContext, RuleSpec, rule


def _without_amount(discount: Element) -> bool:
    """A ScontoMaggiorazione whose Tipo is filled but with neither Percentuale nor Importo."""
    return (
        text(discount, "Tipo") is not None
        and child(discount, "Percentuale") is None
        and child(discount, "Importo") is None
    )


@rule(
    "00437",
    "If 2.1.1.8.1 <Tipo> is filled, at least one of 2.1.1.8.2 <Percentuale> and 2.1.1.8.3 <Importo> required",
    "Give the document discount/surcharge a Percentuale or an Importo.",
    formats=ORDINARY,
    needs=DOCUMENT_DISCOUNTS,
)
def document_discount_amount(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00437: a document-level discount/surcharge must say how much."""
    for body in document_facts(ctx).bodies:
        if not body.facts.discounts:
            continue
        offenders = [
            (
                discount,
                f"2.1.1.8 <ScontoMaggiorazione> of type {text(discount, 'Tipo')} has neither 2.1.1.8.2 "
                f"<Percentuale> nor 2.1.1.8.3 <Importo> ({where(discount)})",
            )
            for discount in body.facts.discounts
            if _without_amount(discount)
        ]
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00438",
    "If 2.2.1.10.1 <Tipo> is filled, at least one of 2.2.1.10.2 and 2.2.1.10.3 required",
    "Give the line discount/surcharge a Percentuale or an Importo.",
    formats=ORDINARY,
    needs=LINE_DISCOUNTS,
)
def line_discount_amount(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00438: a line discount/surcharge must say how much."""
    for body in document_facts(ctx).bodies:
        if not body.line_discount:
            continue
        offenders = [
            (
                discount,
                f"{line_label(line.element)}: 2.2.1.10 <ScontoMaggiorazione> of type "
                f"{text(discount, 'Tipo')} has neither 2.2.1.10.2 <Percentuale> nor 2.2.1.10.3 <Importo> "
                f"({where(discount)})",
            )
            for line in body.lines
            for discount in line.discounts
            if _without_amount(discount)
        ]
        yield from body_findings(ctx, spec, body.index, offenders)
