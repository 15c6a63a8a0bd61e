"""VAT rates of lines, pension-fund blocks and summary blocks, ordinary format (§7.3: 00419, 00424,
00443, 00444, 00474). The simplified-format 00424 lives in `simplified.py`.

00419 (too few summary blocks) and the first half of 00443 (a line rate without summary block)
describe the same gap whenever 00419 fires; then only 00419 is reported and 00443 keeps its other
half (a summary rate without line).
"""

from __future__ import annotations

from collections.abc import Iterator

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import (
    NATURA_AT,
    RATE_AT,
    ZERO,
    body_findings,
    body_prefix,
    decimal_at,
    holder_label,
    line_label,
    rate_text,
    where,
)
from varco.fatturapa.rules.facts import FRACTION_RATE, NATURA, Body, document_facts, is_fraction
from varco.fatturapa.rules.registry import ORDINARY, RuleContext, RuleSpec, rule


def _too_few_summaries(body: Body) -> bool:
    return len(body.facts.summaries) < len(body.rates_in_use)


@rule(
    "00419",
    "Number of 2.2.2 <DatiRiepilogo> blocks must be at least the number of VAT rates in the document",
    "Add one 2.2.2 DatiRiepilogo block per VAT rate used by lines and pension-fund blocks.",
    formats=ORDINARY,
)
def summary_per_rate(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00419: every rate in use needs its own summary block."""
    for body in document_facts(ctx).bodies:
        if not _too_few_summaries(body):
            continue
        line_rates, summaries = body.rates_in_use, body.facts.summaries
        missing = sorted(set(line_rates) - {decimal_at(s, "AliquotaIVA") for s in summaries})
        element = body.element.find("DatiBeniServizi")
        yield ctx.finding(
            spec,
            f"{body_prefix(ctx, body.index)}{len(summaries)} summary block(s) 2.2.2 <DatiRiepilogo> for "
            f"{len(line_rates)} VAT rates ({', '.join(rate_text(r) for r in sorted(line_rates))}); "
            f"no block for {', '.join(rate_text(r) for r in missing)} ({where(element)})",
            element,
            body=body.index,
        )


@rule(
    "00424",
    "Rates (2.2.1.12, 2.2.2.1, 2.1.1.7.5) must be percentages (22.00 not 0.22)",
    "Write VAT rates as percentages: 22.00, not 0.22.",
    formats=ORDINARY,
    needs=FRACTION_RATE,
)
def rates_are_percentages(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00424: a rate strictly between 0 and 1 is a fraction written where a percentage belongs."""
    for body in document_facts(ctx).bodies:
        if not any(map(is_fraction, body.rates_in_use)) and not any(map(is_fraction, body.summary_rates)):
            continue  # the usual case: every rate a percentage
        rated = [(line.element, line.rate, line.rate_element) for line in body.lines]
        rated += [(holder.element, holder.rate, holder.rate_element) for holder in body.holders()]
        offenders = []
        for holder, rate, element in rated:
            if is_fraction(rate):
                label = holder_label(holder, RATE_AT)
                offenders.append(
                    (
                        element,
                        f"{label} <AliquotaIVA> {rate_text(rate)} looks like a fraction; write the "
                        f"percentage ({rate_text(rate * 100)}) ({where(element)})",
                    )
                )
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00443",
    "Every rate in 2.2.1.12 or 2.1.1.7.5 must appear in some 2.2.2.1, and every 2.2.2.1 in some 2.2.1.12 "
    "or 2.1.1.7.5",
    "Make the summary blocks' rates (2.2.2.1) exactly the rates used by lines and pension-fund blocks.",
    formats=ORDINARY,
)
def rates_match_summaries(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00443: the summary rates and the line/pension-fund rates are the same set."""
    for body in document_facts(ctx).bodies:
        line_rates = body.rates_in_use
        summary_rates = body.summary_rates
        if summary_rates.keys() == line_rates.keys():
            continue  # the usual case: the same rates on both sides
        offenders = []
        if not _too_few_summaries(body):  # else 00419 already reports the gap
            for rate, element in line_rates.items():
                if rate not in summary_rates:
                    offenders.append(
                        (
                            element,
                            f"{holder_label(element, RATE_AT)} <AliquotaIVA> {rate_text(rate)} has "
                            f"no summary block 2.2.2 with that 2.2.2.1 <AliquotaIVA> ({where(element)})",
                        )
                    )
        for rate, element in summary_rates.items():
            if rate not in line_rates:
                offenders.append(
                    (
                        element,
                        f"summary block 2.2.2 has 2.2.2.1 <AliquotaIVA> {rate_text(rate)}, used by no detail "
                        f"line (2.2.1.12) nor pension-fund block (2.1.1.7.5) ({where(element)})",
                    )
                )
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00444",
    "Every <Natura> in 2.2.1.14 or 2.1.1.7.7 must appear in some 2.2.2.2, and conversely",
    "Make the summary blocks' Natura values (2.2.2.2) exactly those used by lines and pension-fund blocks.",
    formats=ORDINARY,
    needs=NATURA,  # no Natura on either side: the two sets are equal (both empty)
)
def naturas_match_summaries(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00444: the summary Natura codes and the line/pension-fund Natura codes are the same set."""
    for body in document_facts(ctx).bodies:
        used = body.naturas_in_use
        summarised = body.summary_naturas
        if summarised.keys() == used.keys():
            continue  # the usual case: the same codes on both sides (often none)
        offenders = [
            (
                element,
                f"{holder_label(element, NATURA_AT)} <Natura> {natura} has no summary block "
                f"2.2.2 with that 2.2.2.2 <Natura> ({where(element)})",
            )
            for natura, element in used.items()
            if natura not in summarised
        ]
        offenders += [
            (
                element,
                f"summary block 2.2.2 has 2.2.2.2 <Natura> {natura}, used by no detail line (2.2.1.14) "
                f"nor pension-fund block (2.1.1.7.7) ({where(element)})",
            )
            for natura, element in summarised.items()
            if natura not in used
        ]
        yield from body_findings(ctx, spec, body.index, offenders)


@rule(
    "00474",
    "For the document type concerned (TD21 as stated in the earlier interface version), no detail line may "
    "have 2.2.1.12 rate zero",
    "A TD21 self-invoice for ceiling overrun charges VAT: give every line a non-zero rate.",
    formats=ORDINARY,
    needs="TD21",
)
def self_invoice_taxed(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00474: a ceiling-overrun self-invoice (TD21) exists to charge VAT, so no zero-rate line."""
    for body in document_facts(ctx).bodies:
        if body.facts.type != "TD21":
            continue
        offenders = [
            (
                line.element,
                f"{line_label(line.element)}: 2.2.1.12 <AliquotaIVA> is 0.00 in a TD21 document "
                f"({where(line.element)})",
            )
            for line in body.lines
            if line.rate == ZERO
        ]
        yield from body_findings(ctx, spec, body.index, offenders)
