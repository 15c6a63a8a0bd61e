"""The document's facts, read once per document: the header's values, both parties and, per body, its
facts with those of its detail lines (ordinary) or goods blocks (simplified), with what the rules
ask of every document worked out once (the rates and Natura codes in use, whether any line has a
discount...). The invoice summary, the rules and the SDI controls share them through the document's
memo (`RuleContext.memo`), so that a rule with nothing to say reads a few plain values and stops.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from varco.fatturapa.rules.async_rules._goods import GoodsFacts, _goods_facts
from varco.fatturapa.rules.async_rules._parties import Party, read_header
from varco.fatturapa.rules.async_rules._xml import (
    ZERO,
    BodyFacts,
    Element,
    HolderFacts,
    LineFacts,
    _walk_lines,
    read_body,
)
from varco.fatturapa.rules.registry import RuleContext

ONE = Decimal(1)


# Features of a document that most documents lack: a rule that reads only one of them says it
# (`rule(needs=...)`) and is not called on documents without it. A body with it makes the document have it.
# Each body's 2.1.1.1 TipoDocumento (TD01, ...) is a feature too, for rules about some types only.
LINKED = "linked invoices"  # 2.1.6 DatiFattureCollegate
CORRECTED = "corrected invoice"  # FSM10 2.1.2 DatiFatturaRettificata
DOCUMENT_DISCOUNTS = "document discounts"  # 2.1.1.8 ScontoMaggiorazione
LINE_DISCOUNTS = "line discounts"  # 2.2.1.10 ScontoMaggiorazione
LINE_WITHHOLDING = "line withholding"  # 2.2.1.13 Ritenuta SI
PENSION_FUNDS = "pension funds"  # 2.1.1.7 DatiCassaPrevidenziale
LINE_NATURA = "line Natura"  # a 2.2.1.14 Natura element
SUMMARY_NATURA = "summary Natura"  # a 2.2.2.2 Natura element
NATURA = "Natura"  # a Natura value anywhere (FSM10: a 2.2.4 Natura element)
ZERO_RATE = "zero rate"  # a line or pension-fund block at 0.00 (FSM10: an Imposta or Aliquota of zero)
SUMMARY_ZERO_RATE = "summary zero rate"  # a 2.2.2.1 AliquotaIVA of 0.00
FRACTION_RATE = "fraction rate"  # a rate strictly between 0 and 1, anywhere


@dataclass(slots=True)
class Body:
    """One FatturaElettronicaBody and what the checks read of it."""

    index: int  # 1-based, as findings number the bodies
    element: Element
    facts: BodyFacts
    lines: list[LineFacts]  # 2.2.1 DettaglioLinee (ordinary; empty in FSM10)
    goods: list[GoodsFacts]  # 2.2 DatiBeniServizi blocks (FSM10; empty in the ordinary format)
    # Worked out once from the lines and the pension-fund blocks (2.1.1.7): each rate (2.2.1.12,
    # 2.1.1.7.5) and each Natura (2.2.1.14, 2.1.1.7.7) in use, with the first element carrying it.
    rates_in_use: dict[Decimal, Element]
    naturas_in_use: dict[str, Element]
    line_natura: bool  # some line has a 2.2.1.14 Natura element
    line_discount: bool  # some line has a 2.2.1.10 ScontoMaggiorazione
    line_withholding: bool  # some line has 2.2.1.13 Ritenuta SI
    # Each rate (2.2.2.1) and each Natura (2.2.2.2) of the summary blocks, with the first carrying it.
    summary_rates: dict[Decimal, Element]
    summary_naturas: dict[str, Element]
    summary_natura: bool  # some summary block has a 2.2.2.2 Natura element

    def holders(self) -> list[HolderFacts]:
        """The pension-fund blocks' facts, then the summary blocks' (the order of the messages)."""
        return self.facts.fund_holders + self.facts.summary_holders


@dataclass(slots=True)
class DocumentFacts:
    header: Element | None
    transmission: dict[object, Element]  # 1.1 DatiTrasmissione: its first child of each tag
    emitter: Element | None  # 1.6 (1.4 in FSM10) SoggettoEmittente
    supplier: Party | None
    client: Party | None
    bodies: list[Body]
    features: frozenset[str]  # the features above that the document has


def document_facts(ctx: RuleContext) -> DocumentFacts:
    """The facts of `ctx`'s document, read on the first call for its memo."""
    found = ctx.document
    if found is None:
        key = ("document", ctx.root)
        found = ctx.memo.get(key)
        if found is None:
            found = ctx.memo[key] = _read(ctx)
        object.__setattr__(ctx, "document", found)  # the context is frozen: its cache is set once
    return found  # type: ignore[return-value]


def _read(ctx: RuleContext) -> DocumentFacts:
    memo = ctx.memo
    transmission, emitter, supplier, client = read_header(ctx)
    simplified = ctx.is_simplified
    bodies = []
    # Under the memo keys of `body_facts` and `line_facts`: the SDI controls read the same objects
    # through them.
    for index, element in enumerate(ctx.bodies, start=1):
        facts = memo.get(("body", element))
        if facts is None:
            facts = memo[("body", element)] = read_body(element, simplified)
        lines: list[LineFacts] = []
        goods: list[GoodsFacts] = []
        if simplified:
            goods = [_goods_facts(block) for block in facts.goods]
        else:
            lines = memo.get(("facts", element))
            if lines is None:
                lines = memo[("facts", element)] = _walk_lines(facts.goods)
        bodies.append(_body(index, element, facts, lines, goods))
    return DocumentFacts(ctx.header, transmission, emitter, supplier, client, bodies, _features(bodies))


def _body(
    index: int, element: Element, facts: BodyFacts, lines: list[LineFacts], goods: list[GoodsFacts]
) -> Body:
    rates: dict[Decimal, Element] = {}
    naturas: dict[str, Element] = {}
    line_natura = line_discount = line_withholding = False
    # `setdefault` keeps the first element of each value, hashing it once (a Decimal's hash is no
    # cheap lookup: it is worked out at every call).
    for line in lines:
        if line.rate is not None:
            rates.setdefault(line.rate, line.element)
        if line.natura_element is not None:
            line_natura = True
            if line.natura is not None and line.natura not in naturas:
                naturas[line.natura] = line.element
        if line.discounts:
            line_discount = True
        if line.withholding == "SI":
            line_withholding = True
    for fund in facts.fund_holders:
        if fund.rate is not None:
            rates.setdefault(fund.rate, fund.element)
        if fund.natura is not None and fund.natura not in naturas:
            naturas[fund.natura] = fund.element
    summary_rates: dict[Decimal, Element] = {}
    summary_naturas: dict[str, Element] = {}
    summary_natura = False
    for holder in facts.summary_holders:
        if holder.rate is not None:
            summary_rates.setdefault(holder.rate, holder.element)
        if holder.natura_element is not None:
            summary_natura = True
            if holder.natura is not None and holder.natura not in summary_naturas:
                summary_naturas[holder.natura] = holder.element
    return Body(
        index,
        element,
        facts,
        lines,
        goods,
        rates,
        naturas,
        line_natura,
        line_discount,
        line_withholding,
        summary_rates,
        summary_naturas,
        summary_natura,
    )


def _features(bodies: list[Body]) -> frozenset[str]:
    found = set()
    for body in bodies:
        facts = body.facts
        if facts.type is not None:
            found.add(facts.type)
        if facts.linked:
            found.add(LINKED)
        if facts.corrected is not None:
            found.add(CORRECTED)
        if facts.discounts:
            found.add(DOCUMENT_DISCOUNTS)
        if facts.fund_holders:
            found.add(PENSION_FUNDS)
        if body.line_discount:
            found.add(LINE_DISCOUNTS)
        if body.line_withholding:
            found.add(LINE_WITHHOLDING)
        if body.line_natura:
            found.add(LINE_NATURA)
        if body.naturas_in_use or body.summary_naturas:
            found.add(NATURA)
        if body.summary_natura:
            found.add(SUMMARY_NATURA)
        if ZERO in body.rates_in_use:
            found.add(ZERO_RATE)
        if ZERO in body.summary_rates:
            found.add(SUMMARY_ZERO_RATE)
        if _any_fraction(body.rates_in_use) or _any_fraction(body.summary_rates):
            found.add(FRACTION_RATE)
        for goods in body.goods:
            if goods.natura_element is not None:
                found.add(NATURA)
            tax, rate = goods.tax, goods.rate
            # `None == ZERO` would ask the numbers ABCs (a Python-level isinstance): None is no zero.
            if (tax is not None and tax == ZERO) or (rate is not None and rate == ZERO):
                found.add(ZERO_RATE)
            if is_fraction(rate):
                found.add(FRACTION_RATE)
    return frozenset(found)


def _any_fraction(rates: dict[Decimal, Element]) -> bool:
    for rate in rates:  # a handful at most: the distinct rates of a body
        if ZERO < rate < ONE:
            return True
    return False


def is_fraction(rate: Decimal | None) -> bool:
    """A rate strictly between 0 and 1: a fraction written where a percentage belongs (00424)."""
    return rate is not None and ZERO < rate < ONE
