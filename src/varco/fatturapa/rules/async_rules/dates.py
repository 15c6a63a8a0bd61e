"""The invoice date against the reception date and the linked invoices (§7.3: 00403, 00418).

00403's TD04 clause and 00418 compare the same dates. A credit note (TD04) dated before the
invoice it corrects is reported once, as 00403 (the contract names TD04 there); 00418 covers
every other document type. In the simplified format the linked invoice is 2.1.2
DatiFatturaRettificata, whose 2.1.2.2 DataFR is checked under 00418 for every type.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import (
    BodyFacts,
    Element,
    body_prefix,
    child,
    iso_date,
    text,
    where,
)
from varco.fatturapa.rules.facts import CORRECTED, LINKED, document_facts
from varco.fatturapa.rules.registry import ALL_FORMATS, ORDINARY, SIMPLIFIED, RuleContext, RuleSpec, rule


@rule(
    "00403",
    "2.1.1.3 <Data> must not be later than the date the Exchange System received the file; "
    "for TD04 it must not be earlier than 2.1.6.3 <Data>",
    "Date the invoice on or before the day it is sent; a credit note on or after the invoice it corrects.",
    formats=ALL_FORMATS,
)
def date_not_future(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00403: no invoice from the future; no credit note older than the invoice it credits."""
    for body in document_facts(ctx).bodies:
        facts, index = body.facts, body.index
        issued = facts.date
        if issued is None:
            continue
        if issued > ctx.received_date:
            element = facts.date_element
            yield ctx.finding(
                spec,
                f"{body_prefix(ctx, index)}2.1.1.3 <Data> {issued} is later than the reception date "
                f"{ctx.received_date} ({where(element)})",
                element,
                body=index,
            )
        if facts.linked and facts.type == "TD04":
            for linked, linked_date in _linked_dates(facts):
                if issued < linked_date:
                    yield ctx.finding(
                        spec,
                        f"{body_prefix(ctx, index)}credit note (TD04) 2.1.1.3 <Data> {issued} is earlier "
                        f"than 2.1.6.3 <Data> {linked_date} of the linked invoice "
                        f"'{text(linked.getparent(), 'IdDocumento')}' ({where(linked)})",
                        linked,
                        body=index,
                    )


@rule(
    "00418",
    "2.1.1.3 <Data> must not be before 2.1.6.3 <Data>",
    "A document cannot be older than the invoice it refers to: check 2.1.1.3 and 2.1.6.3 Data.",
    formats=ORDINARY,
    needs=LINKED,
)
def date_after_linked(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00418: the document is not dated before the invoices it links (TD04: see 00403)."""
    for body in document_facts(ctx).bodies:
        facts = body.facts
        issued = facts.date
        if not facts.linked or issued is None or facts.type == "TD04":
            continue
        for linked, linked_date in _linked_dates(facts):
            if issued < linked_date:
                yield ctx.finding(
                    spec,
                    f"{body_prefix(ctx, body.index)}2.1.1.3 <Data> {issued} is before 2.1.6.3 <Data> "
                    f"{linked_date} of the linked invoice '{text(linked.getparent(), 'IdDocumento')}' "
                    f"({where(linked)})",
                    linked,
                    body=body.index,
                )


@rule(
    "00418",
    "2.1.1.3 <Data> must not be before 2.1.2.2 <DataFR> (simplified invoice)",
    "A correcting document cannot be older than the invoice it corrects: check 2.1.2.2 DataFR.",
    formats=SIMPLIFIED,
    needs=CORRECTED,
)
def simplified_date_after_corrected(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00418 (FSM10): the document is not dated before 2.1.2.2 DataFR of the corrected invoice."""
    for body in document_facts(ctx).bodies:
        block = body.facts.corrected
        if block is None:
            continue
        issued = body.facts.date
        corrected = child(block, "DataFR")
        corrected_date = iso_date(text(corrected))
        if issued is None or corrected_date is None or issued >= corrected_date:
            continue
        yield ctx.finding(
            spec,
            f"{body_prefix(ctx, body.index)}2.1.1.3 <Data> {issued} is before 2.1.2.2 <DataFR> "
            f"{corrected_date} of the corrected invoice ({where(corrected)})",
            corrected,
            body=body.index,
        )


def _linked_dates(facts: BodyFacts) -> Iterator[tuple[Element, date]]:
    """(2.1.6.3 Data element, its date) of every 2.1.6 DatiFattureCollegate that has one."""
    for block in facts.linked:
        for linked in block.iterchildren("Data"):
            value = iso_date(text(linked))
            if value is not None:
                yield linked, value
