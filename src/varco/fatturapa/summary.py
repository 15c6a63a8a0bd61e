"""The facts of an invoice file that the upload pipeline and search need, read once after the XSD."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from lxml import etree

from varco.fatturapa.parsing import texts_at
from varco.fatturapa.parties import Party, element_at, first_children, party, string_value

_CENT = Decimal("0.01")
_DOCUMENT = "DatiGenerali/DatiGeneraliDocumento"


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
    header = next(root.iterchildren("FatturaElettronicaHeader"))
    top = first_children(header)
    transmission = first_children(top.get("DatiTrasmissione"))
    transmitter = first_children(transmission.get("IdTrasmittente"))
    body_summary = _simplified_body if simplified else _ordinary_body
    return InvoiceSummary(
        format=fmt,
        transmitter_country=string_value(transmitter.get("IdPaese")),
        transmitter_code=string_value(transmitter.get("IdCodice")),
        progressivo_invio=string_value(transmission.get("ProgressivoInvio")),
        codice_destinatario=string_value(transmission.get("CodiceDestinatario")),
        pec_destinatario=string_value(transmission.get("PECDestinatario")),
        soggetto_emittente=string_value(top.get("SoggettoEmittente")),
        supplier=party(header, "supplier", simplified),
        customer=party(header, "customer", simplified),
        bodies=[body_summary(body) for body in root.iterchildren("FatturaElettronicaBody")],
    )


def _ordinary_body(body: etree._Element) -> BodySummary:
    document = element_at(body, _DOCUMENT)
    total_vat = _sum(texts_at(body, "DatiBeniServizi/DatiRiepilogo/Imposta"))
    declared = string_value(element_at(document, "ImportoTotaleDocumento"))
    total = (
        Decimal(declared)
        if declared
        else _sum(texts_at(body, "DatiBeniServizi/DatiRiepilogo/ImponibileImporto")) + total_vat
    )
    payments = texts_at(body, "DatiPagamento/DettaglioPagamento/ImportoPagamento")
    return _body(document, total, total_vat, _sum(payments) if payments else total)


def _simplified_body(body: etree._Element) -> BodySummary:
    # FSM10 2.2.2 <Importo> includes VAT; 2.2.3 gives either the tax or the rate.
    goods = list(body.iterchildren("DatiBeniServizi"))
    total = _sum(texts_at(body, "DatiBeniServizi/Importo"))
    total_vat = sum((_simplified_vat(g) for g in goods), Decimal("0.00"))
    return _body(element_at(body, _DOCUMENT), total, total_vat, total)


def _body(document: etree._Element, total: Decimal, total_vat: Decimal, net_payable: Decimal) -> BodySummary:
    values = first_children(document)
    return BodySummary(
        document_type=string_value(values.get("TipoDocumento")),
        number=string_value(values.get("Numero")),
        date=date.fromisoformat(string_value(values.get("Data"))),
        currency=string_value(values.get("Divisa")),
        total_document=total,
        total_vat=total_vat,
        net_payable=net_payable,
    )


def _simplified_vat(goods: etree._Element) -> Decimal:
    values = first_children(goods)
    vat = first_children(values.get("DatiIVA"))
    tax = string_value(vat.get("Imposta"))
    if tax:
        return Decimal(tax)
    rate = Decimal(string_value(vat.get("Aliquota")) or "0")
    amount = Decimal(string_value(values.get("Importo")))
    return (amount * rate / (100 + rate)).quantize(_CENT, ROUND_HALF_UP)  # VAT inside a gross amount


def _sum(values: Iterable[str]) -> Decimal:
    return sum((Decimal(v) for v in values), Decimal("0.00"))
