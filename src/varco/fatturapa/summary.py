"""The facts of an invoice file that the upload pipeline and search need, read once after the XSD."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from lxml import etree

from varco.fatturapa.parties import Party, Role, first_children, party, party_of, string_value
from varco.fatturapa.rules.async_rules import _parties
from varco.fatturapa.rules.async_rules._goods import GoodsFacts
from varco.fatturapa.rules.async_rules._xml import LOOKUPS
from varco.fatturapa.rules.facts import Body, document_facts
from varco.fatturapa.rules.registry import RuleContext

_CENT = Decimal("0.01")
_ZERO = Decimal("0.00")  # where a sum starts (immutable: one for every summary)
_HUNDRED = Decimal(100)


@dataclass(frozen=True)
class BodySummary:
    """One invoice (FatturaElettronicaBody) of the file."""

    document_type: str  # 2.1.1.1 TipoDocumento
    number: str  # 2.1.1.4 Numero
    date: date  # 2.1.1.3 Data
    currency: str  # 2.1.1.2 Divisa
    total_document: Decimal
    total_vat: Decimal
    net_payable: Decimal


@dataclass(frozen=True)
class InvoiceSummary:
    format: str
    transmitter_country: str
    transmitter_code: str
    progressivo_invio: str
    codice_destinatario: str
    pec_destinatario: str | None
    soggetto_emittente: str | None  # CC, TZ or None
    supplier: Party
    customer: Party
    bodies: list[BodySummary] = field(default_factory=list)


def extract_summary(root: etree._Element, fmt: str) -> InvoiceSummary:
    """Summarise an XSD-valid invoice (FPA12, FPR12 or FSM10). The schema allows each step of the
    paths read here at most once, so the first child of each tag is the value."""
    # The rules' context over the document's look-ups: the facts read here serve the rules too.
    return summarise(RuleContext(root=root, format=fmt, received_date=date.min, memo=_lookups()))


def summarise(ctx: RuleContext) -> InvoiceSummary:
    """`extract_summary` over a context the caller already has (`check` builds one per document)."""
    facts = document_facts(ctx)
    transmission = facts.transmission
    transmitter = first_children(transmission.get("IdTrasmittente"))
    body_summary = _simplified_body if ctx.is_simplified else _ordinary_body
    # The fields in order, positionally: keyword arguments cost a dict at every call of a class.
    return InvoiceSummary(
        ctx.format,
        string_value(transmitter.get("IdPaese")),  # transmitter_country
        string_value(transmitter.get("IdCodice")),  # transmitter_code
        string_value(transmission.get("ProgressivoInvio")),
        string_value(transmission.get("CodiceDestinatario")),
        string_value(transmission.get("PECDestinatario")),
        string_value(facts.emitter),  # soggetto_emittente
        _party(ctx, "supplier", facts.supplier),
        _party(ctx, "customer", facts.client),
        [body_summary(body) for body in facts.bodies],
    )


def _lookups() -> dict[tuple[object, ...], object]:
    lookups = LOOKUPS.get()
    return {} if lookups is None else lookups


def _party(ctx: RuleContext, role: Role, found: _parties.Party | None) -> Party:
    """The party of `role`, from the identifiers the rules read (once per document)."""
    if found is None:  # no identifiers block: not in an XSD-valid file, but read it as before
        return party(ctx.header, role, ctx.is_simplified)
    return party_of(
        ctx.header,
        role,
        ctx.is_simplified,
        found.children,
        found.country_element,
        found.code_element,
        found.tax_code_element,
    )


def _ordinary_body(body: Body) -> BodySummary:
    facts = body.facts
    values = facts.document_values
    # The schema gives each summary block one Imposta and one ImponibileImporto: the first is all.
    holders = facts.summary_holders
    total_vat = _total([holder.tax_element for holder in holders])
    declared = string_value(values.get("ImportoTotaleDocumento"))
    if declared:
        total = Decimal(declared)
    else:
        total = _total([holder.taxable_element for holder in holders]) + total_vat
    payments = _texts(_children(facts.payments, "DettaglioPagamento"), "ImportoPagamento")
    net_payable = sum(map(Decimal, payments), _ZERO) if payments else total
    return _body(values, total, total_vat, net_payable)


def _simplified_body(body: Body) -> BodySummary:
    # FSM10 2.2.2 <Importo> includes VAT; 2.2.3 gives either the tax or the rate. The schema gives
    # each block one Importo and one DatiIVA: the blocks' facts hold the elements read here.
    total = _total([block.amount_element for block in body.goods])
    total_vat = _ZERO
    for block in body.goods:
        total_vat += _simplified_vat(block)
    return _body(body.facts.document_values, total, total_vat, total)


def _body(
    values: dict[object, etree._Element], total: Decimal, total_vat: Decimal, net_payable: Decimal
) -> BodySummary:
    """The body's summary from the children of its 2.1.1 DatiGeneraliDocumento and its totals."""
    return BodySummary(  # the fields in order (see `summarise`)
        string_value(values.get("TipoDocumento")),
        string_value(values.get("Numero")),
        date.fromisoformat(string_value(values.get("Data"))),
        string_value(values.get("Divisa")),
        total,
        total_vat,
        net_payable,
    )


def _simplified_vat(goods: GoodsFacts) -> Decimal:
    tax = string_value(goods.tax_element)
    if tax:
        return Decimal(tax)
    rate = Decimal(string_value(goods.rate_element) or "0")
    amount = Decimal(string_value(goods.amount_element))
    return (amount * rate / (_HUNDRED + rate)).quantize(_CENT, ROUND_HALF_UP)  # VAT inside a gross amount


def _texts(parents: Iterable[etree._Element], tag: str) -> list[str]:
    """The text nodes of every `tag` child of `parents`, in document order: what the XPath
    `.../tag/text()` returns (a comment inside a value splits it into several nodes)."""
    return [text for item in _children(parents, tag) for text in _text_nodes(item)]


def _children(parents: Iterable[etree._Element], tag: str) -> list[etree._Element]:
    """Every `tag` child of `parents`, in document order (plain walks over the blocks' few children
    cost less than tag-filtered iterators)."""
    return [item for parent in parents for item in parent if item.tag == tag]


def _total(elements: list[etree._Element | None]) -> Decimal:
    """The sum of the text nodes of `elements` (None: absent), as `_texts` reads them."""
    total = _ZERO
    for element in elements:
        if element is None:
            continue
        if len(element) == 0:  # a leaf, as every invoice value is: `_text_nodes` inline
            value = element.text
            if value:
                total += Decimal(value)
        else:
            for node in _text_nodes(element):
                total += Decimal(node)
    return total


def _text_nodes(element: etree._Element) -> list[str]:
    if len(element) == 0:  # a leaf, as every invoice value is
        value = element.text
        return [value] if value else []
    nodes = [element.text, *(item.tail for item in element)]
    return [node for node in nodes if node]
