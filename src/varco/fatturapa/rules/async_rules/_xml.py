"""Small helpers shared by the asynchronous rules: text getters, decimals, body iteration, messages.

Every rule assumes an XSD-valid document, so mandatory elements exist and numbers parse; the
helpers still tolerate absence (returning None) so that one odd file never crashes the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation

from lxml import etree

from varco.fatturapa.findings import Finding
from varco.fatturapa.parties import first_children
from varco.fatturapa.rules.registry import RuleContext, RuleSpec

Element = etree._Element

ZERO = Decimal("0")

# With thousands of detail lines one broken rule could yield thousands of findings: report the
# first few offenders of a rule per body and count the rest in the last message.
MAX_PER_BODY = 10


# Several rules read the same facts of every body and detail line. While `run_rules` runs, they are
# memoised here, keyed by the body element itself: the key keeps the lxml proxy alive, so the same
# node always comes back as the same object and identity-based keys stay valid.
LOOKUPS: ContextVar[dict[tuple[object, ...], object] | None] = ContextVar("fatturapa_lookups", default=None)


def child(element: Element, tag: str) -> Element | None:
    """First child named `tag`. The blocks asked are small: a plain walk over their children costs
    less than setting up a tag-filtered iterator, and far less than `find` (ElementPath)."""
    for item in element:
        if item.tag == tag:
            return item
    return None


def descendant(element: Element, path: str) -> Element | None:
    """The first element at the child path `path` (`A/B/C`) in document order, as `find` does."""
    return _first(element, path.split("/")) if "/" in path else child(element, path)


def _first(element: Element, steps: list[str]) -> Element | None:
    head, rest = steps[0], steps[1:]
    for item in element:
        if item.tag == head:
            found = _first(item, rest) if rest else item
            if found is not None:
                return found
    return None


def text(element: Element | None, path: str | None = None) -> str | None:
    """Stripped text of `element` (or of its descendant at `path`), None when absent or empty."""
    if element is None:
        return None
    target = element if path is None else descendant(element, path)
    if target is None:
        return None
    value = target.text  # read once: lxml builds a new string at each read
    return value.strip() or None if value is not None else None


def decimal(value: str | None) -> Decimal | None:
    """The XSD decimal `value` as a Decimal (None when absent or, defensively, unparsable)."""
    if value is None:
        return None
    try:
        return Decimal(value)
    except InvalidOperation:
        return None


def decimal_at(element: Element | None, path: str) -> Decimal | None:
    return decimal(text(element, path))


def iso_date(value: str | None) -> date | None:
    """An xs:date (`2026-10-15`, possibly with a zone suffix, which is ignored) as a date."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def rate_text(value: Decimal) -> str:
    """A rate as the XSD writes it (two decimals): 22 -> `22.00`."""
    return f"{value:.2f}"


def where(element: Element | None) -> str:
    """`XML line 57`, the source line of an element, for messages."""
    line = element.sourceline if element is not None else None
    return f"XML line {line}" if line else "XML line ?"


def bodies(ctx: RuleContext) -> Iterator[tuple[int, Element]]:
    """Every FatturaElettronicaBody with its 1-based index (a batch file holds several)."""
    return enumerate(ctx.bodies, start=1)


def transmission_values(ctx: RuleContext) -> dict[object, Element]:
    """The first child of each tag of 1.1 DatiTrasmissione (read once per document: the summary and
    three rules read its values)."""
    key = ("transmission", ctx.header)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = first_children(child(ctx.header, "DatiTrasmissione"))
    return found  # type: ignore[return-value]


def body_prefix(ctx: RuleContext, index: int) -> str:
    """`body 2: ` in a batch file, empty for a single invoice."""
    return f"body {index}: " if len(ctx.bodies) > 1 else ""


@dataclass(slots=True)
class HolderFacts:
    """What the rules read of a 2.2.2 DatiRiepilogo or a 2.1.1.7 DatiCassaPrevidenziale block: its
    rate and Natura (read by a dozen rules), in one walk over its children."""

    element: Element
    rate: Decimal | None = None  # AliquotaIVA
    rate_element: Element | None = None
    natura: str | None = None  # Natura, stripped
    natura_element: Element | None = None
    esigibilita_element: Element | None = None  # 2.2.2.7 EsigibilitaIVA (summary blocks)
    # The amounts of a summary block, for the invoice summary (`summary.py`): 2.2.2.5, 2.2.2.6.
    taxable_element: Element | None = None  # ImponibileImporto
    tax_element: Element | None = None  # Imposta


def _holder_facts(holder: Element) -> HolderFacts:
    # A plain walk over the block's few children: lxml's tag-filtered iterators cost more to set up
    # than the walk itself.
    facts = HolderFacts(holder)
    for item in holder:
        tag = item.tag
        if tag == "AliquotaIVA":
            if facts.rate_element is None:  # `text`, inline: read for every block
                facts.rate_element, facts.rate = item, decimal((item.text or "").strip() or None)
        elif tag == "Natura":
            if facts.natura_element is None:
                facts.natura_element, facts.natura = item, (item.text or "").strip() or None
        elif tag == "EsigibilitaIVA":
            if facts.esigibilita_element is None:
                facts.esigibilita_element = item
        elif tag == "ImponibileImporto":
            if facts.taxable_element is None:
                facts.taxable_element = item
        elif tag == "Imposta":
            if facts.tax_element is None:
                facts.tax_element = item
    return facts


@dataclass(slots=True)
class BodyFacts:
    """What the rules read of one FatturaElettronicaBody outside its detail lines, collected in one
    walk over 2.1 DatiGenerali, 2.1.1 DatiGeneraliDocumento and 2.2 DatiBeniServizi."""

    document: Element | None = None  # 2.1.1 DatiGeneraliDocumento
    document_values: dict[object, Element] = field(default_factory=dict)  # its first child of each tag
    type: str | None = None  # 2.1.1.1 TipoDocumento, stripped
    date_element: Element | None = None  # 2.1.1.3 Data
    date: date | None = None
    number_element: Element | None = None  # 2.1.1.4 Numero
    withholding: bool = False  # 2.1.1.5 DatiRitenuta present
    pension_funds: list[Element] = field(default_factory=list)  # 2.1.1.7 DatiCassaPrevidenziale
    discounts: list[Element] = field(default_factory=list)  # 2.1.1.8 ScontoMaggiorazione
    linked: list[Element] = field(default_factory=list)  # 2.1.6 DatiFattureCollegate
    corrected: Element | None = None  # 2.1.2 DatiFatturaRettificata (simplified)
    goods: list[Element] = field(default_factory=list)  # 2.2 DatiBeniServizi
    summaries: list[Element] = field(default_factory=list)  # 2.2.2 DatiRiepilogo (ordinary)
    payments: list[Element] = field(default_factory=list)  # 2.4 DatiPagamento
    summary_holders: list[HolderFacts] = field(default_factory=list)  # their facts
    fund_holders: list[HolderFacts] = field(default_factory=list)  # facts of pension_funds


def body_facts(body: Element) -> BodyFacts:
    """The facts of `body`, computed once per document run."""
    cache = LOOKUPS.get()
    if cache is None:
        return read_body(body)
    found = cache.get(("body", body))
    if found is None:
        found = cache[("body", body)] = read_body(body)
    return found  # type: ignore[return-value]


def read_body(body: Element, simplified: bool = False) -> BodyFacts:
    """The facts of `body`, read now (`body_facts` and `rules.facts` remember them). `simplified`:
    an FSM10 body, whose goods blocks hold no 2.2.2 DatiRiepilogo (there 2.2.2 is Importo)."""
    facts = BodyFacts()
    # Plain walks over the body's and DatiGenerali's few children: lxml's tag-filtered iterators
    # cost more to set up than these walks.
    for part in body:
        tag = part.tag
        if tag == "DatiGenerali":
            for block in part:
                name = block.tag
                if name == "DatiFattureCollegate":
                    facts.linked.append(block)
                elif name == "DatiFatturaRettificata":
                    if facts.corrected is None:
                        facts.corrected = block
                elif name == "DatiGeneraliDocumento" and facts.document is None:  # the first, as `find`
                    facts.document = block
                    _read_document(block, facts)
        elif tag == "DatiBeniServizi":
            facts.goods.append(part)
            if not simplified:
                facts.summaries.extend(part.iterchildren("DatiRiepilogo"))  # lxml skips the lines
        elif tag == "DatiPagamento":
            facts.payments.append(part)
    facts.summary_holders = [_holder_facts(summary) for summary in facts.summaries]
    facts.fund_holders = [_holder_facts(fund) for fund in facts.pension_funds]
    return facts


def _read_document(document: Element, facts: BodyFacts) -> None:
    values = facts.document_values
    for item in document:
        tag = item.tag
        if tag not in values:
            values[tag] = item
        if tag == "TipoDocumento":
            if facts.type is None:
                facts.type = (item.text or "").strip() or None  # `text`, inline: read for every body
        elif tag == "Data":
            if facts.date_element is None:
                facts.date_element = item
                facts.date = iso_date((item.text or "").strip() or None)
        elif tag == "Numero":
            if facts.number_element is None:
                facts.number_element = item
        elif tag == "DatiRitenuta":
            facts.withholding = True
        elif tag == "DatiCassaPrevidenziale":
            facts.pension_funds.append(item)
        elif tag == "ScontoMaggiorazione":
            facts.discounts.append(item)


def doc_type(body: Element) -> str | None:
    """2.1.1.1 TipoDocumento of a body."""
    return body_facts(body).type


def doc_date(body: Element) -> tuple[Element | None, date | None]:
    """2.1.1.3 Data of a body, as element (for the xpath) and value."""
    facts = body_facts(body)
    return facts.date_element, facts.date


@dataclass(slots=True)
class LineFacts:
    """What the line-level rules read of one 2.2.1 DettaglioLinee, collected in one walk over its
    children so that eight rules over thousands of lines cost one pass, not eight."""

    element: Element
    rate: Decimal | None = None  # 2.2.1.12 AliquotaIVA
    rate_element: Element | None = None
    natura: str | None = None  # 2.2.1.14 Natura, stripped
    natura_element: Element | None = None
    withholding: str | None = None  # 2.2.1.13 Ritenuta
    discounts: tuple[Element, ...] = ()  # 2.2.1.10 ScontoMaggiorazione
    # The amounts (the SDI's 00422/00423 parse them; the contract's rules do not, so their texts are
    # read only when asked)
    quantity_element: Element | None = None  # 2.2.1.5 Quantita
    unit_price_element: Element | None = None  # 2.2.1.9 PrezzoUnitario
    total_element: Element | None = None  # 2.2.1.11 PrezzoTotale

    @property
    def quantity(self) -> str | None:
        """2.2.1.5 Quantita as written (stripped)."""
        return _stripped_text(self.quantity_element)

    @property
    def unit_price(self) -> str | None:
        """2.2.1.9 PrezzoUnitario as written (stripped)."""
        return _stripped_text(self.unit_price_element)

    @property
    def total(self) -> str | None:
        """2.2.1.11 PrezzoTotale as written (stripped)."""
        return _stripped_text(self.total_element)


def _stripped_text(element: Element | None) -> str | None:
    return (element.text or "").strip() or None if element is not None else None


# The tags the walk over the detail lines stops at: the line, and the children the rules read.
_LINE_WALK = (
    "DettaglioLinee",
    "Quantita",
    "PrezzoUnitario",
    "PrezzoTotale",
    "AliquotaIVA",
    "Natura",
    "Ritenuta",
    "ScontoMaggiorazione",
)


def _walk_lines(goods: list[Element]) -> list[LineFacts]:
    """The facts of each 2.2.1 DettaglioLinee of the goods blocks, in one walk per block: lxml
    matches the tags, so a line's other children and their descendants never become Python objects
    (with thousands of lines, most of the cost). Parents are compared so that only a block's own
    lines and a line's own children count, as a walk over children would; a value given twice
    counts with its last occurrence."""
    found: list[LineFacts] = []
    rates: dict[str, Decimal | None] = {}  # a document uses a handful of rates: parse each once
    for block in goods:
        facts: LineFacts | None = None
        line: Element | None = None
        for item in block.iter(*_LINE_WALK):
            tag = item.tag
            parent = item.getparent()
            if tag == "DettaglioLinee":
                if parent is block:
                    line, facts = item, LineFacts(item)
                    found.append(facts)
                continue
            if parent is not line:  # before the first line, or below one of its children
                continue
            # The hot loop of a large file: the dispatch stays inline, the commonest tags first.
            if tag == "AliquotaIVA":
                facts.rate_element = item
                raw = (item.text or "").strip()
                if raw not in rates:
                    rates[raw] = decimal(raw or None)
                facts.rate = rates[raw]
            elif tag == "PrezzoTotale":
                facts.total_element = item
            elif tag == "PrezzoUnitario":
                facts.unit_price_element = item
            elif tag == "Quantita":
                facts.quantity_element = item
            elif tag == "Natura":
                facts.natura_element = item
                facts.natura = (item.text or "").strip() or None
            elif tag == "Ritenuta":
                facts.withholding = (item.text or "").strip() or None
            else:  # ScontoMaggiorazione
                facts.discounts += (item,)
    return found


def line_facts(body: Element) -> list[LineFacts]:
    """The facts of every detail line of an ordinary body, computed once per document run."""
    cache = LOOKUPS.get()
    key = ("facts", body)
    if cache is not None:
        found = cache.get(key)
        if found is not None:
            return found  # type: ignore[return-value]
    facts = _walk_lines(body_facts(body).goods)
    if cache is not None:
        cache[key] = facts
    return facts


def summaries(body: Element) -> list[Element]:
    """2.2.2 DatiRiepilogo of an ordinary body."""
    return body_facts(body).summaries


def pension_funds(body: Element) -> list[Element]:
    """2.1.1.7 DatiCassaPrevidenziale of an ordinary body."""
    return body_facts(body).pension_funds


# Element numbers of AliquotaIVA and Natura in a line, a pension-fund block and a summary block.
RATE_AT = ("2.2.1.12", "2.1.1.7.5", "2.2.2.1")
NATURA_AT = ("2.2.1.14", "2.1.1.7.7", "2.2.2.2")


def holder_label(element: Element, numbers: tuple[str, str, str]) -> str:
    """`detail line 3: 2.2.1.12`, `pension-fund block 2.1.1.7 (TC22): 2.1.1.7.5` or
    `summary block 2.2.2: 2.2.2.1`: where a rate or Natura sits, with its element number."""
    line_number, fund_number, summary_number = numbers
    if element.tag == "DettaglioLinee":
        return f"{line_label(element)}: {line_number}"
    if element.tag == "DatiCassaPrevidenziale":
        return f"pension-fund block 2.1.1.7 ({text(element, 'TipoCassa')}): {fund_number}"
    return f"summary block 2.2.2: {summary_number}"


def line_label(line: Element) -> str:
    """`detail line 3`, from 2.2.1.1 NumeroLinea."""
    return f"detail line {text(line, 'NumeroLinea') or '?'}"


def body_findings(
    ctx: RuleContext,
    spec: RuleSpec,
    index: int,
    offenders: list[tuple[Element, str]],
) -> list[Finding]:
    """Findings for one body's offending elements, prefixed with the body, capped at MAX_PER_BODY."""
    if not offenders:  # the usual case, asked of every body by a dozen rules: nothing to build
        return []
    prefix = body_prefix(ctx, index)
    shown = offenders[:MAX_PER_BODY]
    hidden = len(offenders) - len(shown)
    findings = []
    for position, (element, message) in enumerate(shown, start=1):
        if hidden and position == len(shown):
            message += f" (and {hidden} more like this in the same body)"
        findings.append(ctx.finding(spec, prefix + message, element, body=index))
    return findings
