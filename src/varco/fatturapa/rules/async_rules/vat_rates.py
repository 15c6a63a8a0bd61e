"""VAT rates of lines, pension-fund blocks and summary blocks, ordinary format (§7.3: 00419, 00424,
00443, 00444, 00474). The simplified-format 00424 lives in `simplified.py`.

00419 (too few summary blocks) and the first half of 00443 (a line rate without summary block)
describe the same gap whenever 00419 fires; then only 00419 is reported and 00443 keeps its other
half (a summary rate without line).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import (
    LOOKUPS,
    NATURA_AT,
    RATE_AT,
    ZERO,
    Element,
    HolderFacts,
    bodies,
    body_facts,
    body_findings,
    body_prefix,
    decimal_at,
    doc_type,
    holder_label,
    line_facts,
    line_label,
    rate_holders,
    rate_text,
    summaries,
    where,
)
from varco.fatturapa.rules.registry import ORDINARY, RuleContext, RuleSpec, rule

ONE = Decimal(1)


def _first_by_rate(holders: list[HolderFacts]) -> dict[Decimal, Element]:
    """Each distinct AliquotaIVA with the first element carrying it."""
    found: dict[Decimal, Element] = {}
    for holder in holders:
        if holder.rate is not None:
            found.setdefault(holder.rate, holder.element)
    return found


def _line_rates(body: Element) -> dict[Decimal, Element]:
    """Rates of 2.2.1.12 (lines) and 2.1.1.7.5 (pension funds), first element of each (found once
    per document run: 00419 and 00443 read them; neither changes them)."""
    cache = LOOKUPS.get()
    key = ("line rates", body)
    found = cache.get(key) if cache is not None else None
    if found is None:
        found = _rates_in_use(body)
        if cache is not None:
            cache[key] = found
    return found  # type: ignore[return-value]


def _rates_in_use(body: Element) -> dict[Decimal, Element]:
    rates: dict[Decimal, Element] = {}
    for line in line_facts(body):
        if line.rate is not None:
            rates.setdefault(line.rate, line.element)
    for rate, fund in _first_by_rate(body_facts(body).fund_holders).items():
        rates.setdefault(rate, fund)
    return rates


def _too_few_summaries(body: Element, line_rates: dict[Decimal, Element]) -> bool:
    return len(summaries(body)) < len(line_rates)


@rule(
    "00419",
    "Number of 2.2.2 <DatiRiepilogo> blocks must be at least the number of VAT rates in the document",
    "Add one 2.2.2 DatiRiepilogo block per VAT rate used by lines and pension-fund blocks.",
    formats=ORDINARY,
)
def summary_per_rate(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00419: every rate in use needs its own summary block."""
    for index, body in bodies(ctx):
        line_rates = _line_rates(body)
        if not _too_few_summaries(body, line_rates):
            continue
        blocks = sum(1 for _ in summaries(body))
        missing = sorted(set(line_rates) - {decimal_at(s, "AliquotaIVA") for s in summaries(body)})
        element = body.find("DatiBeniServizi")
        yield ctx.finding(
            spec,
            f"{body_prefix(ctx, index)}{blocks} summary block(s) 2.2.2 <DatiRiepilogo> for "
            f"{len(line_rates)} VAT rates ({', '.join(rate_text(r) for r in sorted(line_rates))}); "
            f"no block for {', '.join(rate_text(r) for r in missing)} ({where(element)})",
            element,
            body=index,
        )


@rule(
    "00424",
    "Rates (2.2.1.12, 2.2.2.1, 2.1.1.7.5) must be percentages (22.00 not 0.22)",
    "Write VAT rates as percentages: 22.00, not 0.22.",
    formats=ORDINARY,
)
def rates_are_percentages(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00424: a rate strictly between 0 and 1 is a fraction written where a percentage belongs."""
    for index, body in bodies(ctx):
        offenders = []
        for holder, rate, element in rate_holders(body):
            if rate is not None and ZERO < rate < ONE:
                label = holder_label(holder, RATE_AT)
                offenders.append(
                    (
                        element,
                        f"{label} <AliquotaIVA> {rate_text(rate)} looks like a fraction; write the "
                        f"percentage ({rate_text(rate * 100)}) ({where(element)})",
                    )
                )
        yield from body_findings(ctx, spec, index, offenders)


@rule(
    "00443",
    "Every rate in 2.2.1.12 or 2.1.1.7.5 must appear in some 2.2.2.1, and every 2.2.2.1 in some 2.2.1.12 "
    "or 2.1.1.7.5",
    "Make the summary blocks' rates (2.2.2.1) exactly the rates used by lines and pension-fund blocks.",
    formats=ORDINARY,
)
def rates_match_summaries(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00443: the summary rates and the line/pension-fund rates are the same set."""
    for index, body in bodies(ctx):
        line_rates = _line_rates(body)
        summary_rates = _first_by_rate(body_facts(body).summary_holders)
        offenders = []
        if not _too_few_summaries(body, line_rates):  # else 00419 already reports the gap
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
        yield from body_findings(ctx, spec, index, offenders)


def _first_by_natura(holders: list[HolderFacts]) -> dict[str, Element]:
    found: dict[str, Element] = {}
    for holder in holders:
        if holder.natura is not None:
            found.setdefault(holder.natura, holder.element)
    return found


@rule(
    "00444",
    "Every <Natura> in 2.2.1.14 or 2.1.1.7.7 must appear in some 2.2.2.2, and conversely",
    "Make the summary blocks' Natura values (2.2.2.2) exactly those used by lines and pension-fund blocks.",
    formats=ORDINARY,
)
def naturas_match_summaries(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00444: the summary Natura codes and the line/pension-fund Natura codes are the same set."""
    for index, body in bodies(ctx):
        used: dict[str, Element] = {}
        for line in line_facts(body):
            if line.natura is not None:
                used.setdefault(line.natura, line.element)
        facts = body_facts(body)
        for natura, fund in _first_by_natura(facts.fund_holders).items():
            used.setdefault(natura, fund)
        summarised = _first_by_natura(facts.summary_holders)
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
        yield from body_findings(ctx, spec, index, offenders)


@rule(
    "00474",
    "For the document type concerned (TD21 as stated in the earlier interface version), no detail line may "
    "have 2.2.1.12 rate zero",
    "A TD21 self-invoice for ceiling overrun charges VAT: give every line a non-zero rate.",
    formats=ORDINARY,
)
def self_invoice_taxed(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00474: a ceiling-overrun self-invoice (TD21) exists to charge VAT, so no zero-rate line."""
    for index, body in bodies(ctx):
        if doc_type(body) != "TD21":
            continue
        offenders = [
            (line, f"{line_label(line)}: 2.2.1.12 <AliquotaIVA> is 0.00 in a TD21 document ({where(line)})")
            for line in (facts.element for facts in line_facts(body) if facts.rate == ZERO)
        ]
        yield from body_findings(ctx, spec, index, offenders)
