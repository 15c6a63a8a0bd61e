"""The facts of an invoice file that the upload pipeline and search need, read once after the XSD."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from lxml import etree

from varco.fatturapa.parties import Party, Role, first_children, party, party_of, string_value
from varco.fatturapa.rules.async_rules import _parties
from varco.fatturapa.rules.async_rules._xml import LOOKUPS, body_facts, transmission_values
from varco.fatturapa.rules.async_rules.simplified import GoodsFacts, goods_facts
from varco.fatturapa.rules.registry import RuleContext

_CENT = Decimal("0.01")


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
    simplified = fmt == "FSM10"
    # The rules' context over the document's look-ups: the parties found here serve the rules too.
    ctx = RuleContext(root=root, format=fmt, received_date=date.min, memo=_lookups())
    header = ctx.header
    transmission = transmission_values(ctx)
    transmitter = first_children(transmission.get("IdTrasmittente"))
    body_summary = _simplified_body if simplified else _ordinary_body
    return InvoiceSummary(
        format=fmt,
        transmitter_country=string_value(transmitter.get("IdPaese")),
        transmitter_code=string_value(transmitter.get("IdCodice")),
        progressivo_invio=string_value(transmission.get("ProgressivoInvio")),
        codice_destinatario=string_value(transmission.get("CodiceDestinatario")),
        pec_destinatario=string_value(transmission.get("PECDestinatario")),
        soggetto_emittente=string_value(next(header.iterchildren("SoggettoEmittente"), None)),
        supplier=_party(ctx, "supplier"),
        customer=_party(ctx, "customer"),
        bodies=[body_summary(body) for body in ctx.bodies],
    )


def _lookups() -> dict[tuple[object, ...], object]:
    lookups = LOOKUPS.get()
    return {} if lookups is None else lookups


def _party(ctx: RuleContext, role: Role) -> Party:
    """The party of `role`, from the identifiers the rules look up (once per document)."""
    found = _parties.supplier(ctx) if role == "supplier" else _parties.client(ctx)
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


def _ordinary_body(body: etree._Element) -> BodySummary:
    facts = body_facts(body)
    values = facts.document_values
    # The schema gives each summary block one Imposta and one ImponibileImporto: the first is all.
    holders = facts.summary_holders
    total_vat = _sum(_amounts(holder.tax_element for holder in holders))
    declared = string_value(values.get("ImportoTotaleDocumento"))
    total = Decimal(declared) if declared else _sum(_amounts(h.taxable_element for h in holders)) + total_vat
    details = [detail for payment in facts.payments for detail in payment.iterchildren("DettaglioPagamento")]
    payments = _texts(details, "ImportoPagamento")
    return _body(values, total, total_vat, _sum(payments) if payments else total)


def _simplified_body(body: etree._Element) -> BodySummary:
    # FSM10 2.2.2 <Importo> includes VAT; 2.2.3 gives either the tax or the rate. The schema gives
    # each block one Importo and one DatiIVA: the blocks' facts hold the elements read here.
    facts = body_facts(body)
    goods = goods_facts(body)
    total = _sum(_amounts(block.amount_element for block in goods))
    total_vat = sum((_simplified_vat(block) for block in goods), Decimal("0.00"))
    return _body(facts.document_values, total, total_vat, total)


def _body(
    values: dict[object, etree._Element], total: Decimal, total_vat: Decimal, net_payable: Decimal
) -> BodySummary:
    """The body's summary from the children of its 2.1.1 DatiGeneraliDocumento and its totals."""
    return BodySummary(
        document_type=string_value(values.get("TipoDocumento")),
        number=string_value(values.get("Numero")),
        date=date.fromisoformat(string_value(values.get("Data"))),
        currency=string_value(values.get("Divisa")),
        total_document=total,
        total_vat=total_vat,
        net_payable=net_payable,
    )


def _simplified_vat(goods: GoodsFacts) -> Decimal:
    tax = string_value(goods.tax_element)
    if tax:
        return Decimal(tax)
    rate = Decimal(string_value(goods.rate_element) or "0")
    amount = Decimal(string_value(goods.amount_element))
    return (amount * rate / (100 + rate)).quantize(_CENT, ROUND_HALF_UP)  # VAT inside a gross amount


def _texts(parents: Iterable[etree._Element], tag: str) -> list[str]:
    """The text nodes of every `tag` child of `parents`, in document order: what the XPath
    `.../tag/text()` returns (a comment inside a value splits it into several nodes)."""
    return [text for parent in parents for item in parent.iterchildren(tag) for text in _text_nodes(item)]


def _amounts(elements: Iterable[etree._Element | None]) -> list[str]:
    """The text nodes of `elements` (None: absent), in order, as `_texts` reads them."""
    return [text for element in elements if element is not None for text in _text_nodes(element)]


def _text_nodes(element: etree._Element) -> list[str]:
    if len(element) == 0:  # a leaf, as every invoice value is
        return [element.text] if element.text else []
    nodes = [element.text, *(item.tail for item in element)]
    return [node for node in nodes if node]


def _sum(values: Iterable[str]) -> Decimal:
    return sum((Decimal(v) for v in values), Decimal("0.00"))
