"""Discounts and surcharges (§7.3: 00437, 00438), ordinary format."""

from __future__ import annotations

from collections.abc import Iterator

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import (
    Element,
    bodies,
    body_facts,
    body_findings,
    child,
    line_facts,
    line_label,
    text,
    where,
)
from varco.fatturapa.rules.registry import ORDINARY, RuleContext, RuleSpec, rule


def _without_amount(discount: Element) -> bool:
    """A ScontoMaggiorazione whose Tipo is filled but with neither Percentuale nor Importo."""
    return (
        text(discount, "Tipo") is not None
        and child(discount, "Percentuale") is None
        and child(discount, "Importo") is None
    )


def _line_discounts(body: Element) -> Iterator[tuple[Element, Element]]:
    return ((line.element, discount) for line in line_facts(body) for discount in line.discounts)


@rule(
    "00437",
    "If 2.1.1.8.1 <Tipo> is filled, at least one of 2.1.1.8.2 <Percentuale> and 2.1.1.8.3 <Importo> required",
    "Give the document discount/surcharge a Percentuale or an Importo.",
    formats=ORDINARY,
)
def document_discount_amount(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00437: a document-level discount/surcharge must say how much."""
    for index, body in bodies(ctx):
        offenders = [
            (
                discount,
                f"2.1.1.8 <ScontoMaggiorazione> of type {text(discount, 'Tipo')} has neither 2.1.1.8.2 "
                f"<Percentuale> nor 2.1.1.8.3 <Importo> ({where(discount)})",
            )
            for discount in body_facts(body).discounts
            if _without_amount(discount)
        ]
        yield from body_findings(ctx, spec, index, offenders)


@rule(
    "00438",
    "If 2.2.1.10.1 <Tipo> is filled, at least one of 2.2.1.10.2 and 2.2.1.10.3 required",
    "Give the line discount/surcharge a Percentuale or an Importo.",
    formats=ORDINARY,
)
def line_discount_amount(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00438: a line discount/surcharge must say how much."""
    for index, body in bodies(ctx):
        offenders = [
            (
                discount,
                f"{line_label(line)}: 2.2.1.10 <ScontoMaggiorazione> of type {text(discount, 'Tipo')} has "
                f"neither 2.2.1.10.2 <Percentuale> nor 2.2.1.10.3 <Importo> ({where(discount)})",
            )
            for line, discount in _line_discounts(body)
            if _without_amount(discount)
        ]
        yield from body_findings(ctx, spec, index, offenders)
