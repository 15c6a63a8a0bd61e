"""Withholding tax data (§7.3: 00411, 00415), ordinary format.

Both texts name the pension-fund flag 2.1.1.7.6; to report one cause once, 00411 covers detail
lines with 2.2.1.13 Ritenuta SI and 00415 the pension-fund blocks with 2.1.1.7.6 Ritenuta SI.
"""

from __future__ import annotations

from collections.abc import Iterator

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import Element, body_prefix, line_label, text, where
from varco.fatturapa.rules.facts import LINE_WITHHOLDING, PENSION_FUNDS, document_facts
from varco.fatturapa.rules.registry import ORDINARY, RuleContext, RuleSpec, rule


def _flagged(elements: list[Element]) -> list[Element]:
    return [element for element in elements if text(element, "Ritenuta") == "SI"]


def _others(count: int) -> str:
    return f" and {count} more" if count else ""


@rule(
    "00411",
    "2.1.1.5 <DatiRitenuta> required when a line 2.2.1 has 2.2.1.13 <Ritenuta> = SI and/or a pension-fund "
    "block 2.1.1.7 has 2.1.1.7.6 = SI",
    "Add 2.1.1.5 DatiRitenuta (type, amount, rate, payment reason) or remove Ritenuta SI from the lines.",
    formats=ORDINARY,
    needs=LINE_WITHHOLDING,
)
def lines_need_withholding(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00411: a line subject to withholding needs the withholding block."""
    for body in document_facts(ctx).bodies:
        if body.facts.withholding or not body.line_withholding:
            continue
        flagged = [line.element for line in body.lines if line.withholding == "SI"]
        first = flagged[0]
        yield ctx.finding(
            spec,
            f"{body_prefix(ctx, body.index)}2.1.1.5 <DatiRitenuta> is missing although {line_label(first)}"
            f"{_others(len(flagged) - 1)} has 2.2.1.13 <Ritenuta> SI ({where(first)})",
            first,
            body=body.index,
        )


@rule(
    "00415",
    "2.1.1.5 <DatiRitenuta> required when 2.1.1.7.6 <Ritenuta> = SI",
    "Add 2.1.1.5 DatiRitenuta or remove Ritenuta SI from the pension-fund block 2.1.1.7.",
    formats=ORDINARY,
    needs=PENSION_FUNDS,
)
def pension_fund_needs_withholding(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00415: a pension-fund contribution subject to withholding needs the withholding block."""
    for body in document_facts(ctx).bodies:
        facts = body.facts
        if facts.withholding or not facts.pension_funds:
            continue
        flagged = _flagged(facts.pension_funds)
        if flagged:
            first = flagged[0]
            yield ctx.finding(
                spec,
                f"{body_prefix(ctx, body.index)}2.1.1.5 <DatiRitenuta> is missing although the pension-fund "
                f"block 2.1.1.7 ({text(first, 'TipoCassa')}){_others(len(flagged) - 1)} has 2.1.1.7.6 "
                f"<Ritenuta> SI ({where(first)})",
                first,
                body=body.index,
            )
