"""The invoice number (§7.3: 00425), ordinary and simplified (both number it 2.1.1.4)."""

from __future__ import annotations

from collections.abc import Iterator

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import body_prefix, where
from varco.fatturapa.rules.facts import document_facts
from varco.fatturapa.rules.registry import ALL_FORMATS, RuleContext, RuleSpec, rule


@rule(
    "00425",
    "2.1.1.4 <Numero> must contain at least one digit",
    "Give the invoice a number with at least one digit (e.g. 2026/0042).",
    formats=ALL_FORMATS,
)
def number_has_digit(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00425: an invoice number without any digit is refused."""
    for body in document_facts(ctx).bodies:
        element = body.facts.number_element
        if element is None:
            continue
        number = element.text or ""
        if not any(map(str.isdigit, number)):
            yield ctx.finding(
                spec,
                f"{body_prefix(ctx, body.index)}2.1.1.4 <Numero> '{number}' contains no digit "
                f"({where(element)})",
                element,
                body=body.index,
            )
