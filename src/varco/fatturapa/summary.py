"""The facts of an invoice file that the upload pipeline and search need, read once after the XSD."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from lxml import etree

from varco.fatturapa.parsing import text_at, texts_at
from varco.fatturapa.parties import Party, party

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
    """Summarise an XSD-valid invoice (FPA12, FPR12 or FSM10)."""
    simplified = fmt == "FSM10"
    header = root.find("FatturaElettronicaHeader")
    transmission = header.find("DatiTrasmissione")
    body_summary = _simplified_body if simplified else _ordinary_body
    return InvoiceSummary(
        format=fmt,
        transmitter_country=text_at(transmission, "IdTrasmittente/IdPaese"),
        transmitter_code=text_at(transmission, "IdTrasmittente/IdCodice"),
        progressivo_invio=text_at(transmission, "ProgressivoInvio"),
        codice_destinatario=text_at(transmission, "CodiceDestinatario"),
        pec_destinatario=text_at(transmission, "PECDestinatario"),
        soggetto_emittente=text_at(header, "SoggettoEmittente"),
        supplier=party(header, "supplier", simplified),
        customer=party(header, "customer", simplified),
        bodies=[body_summary(body) for body in root.iterfind("FatturaElettronicaBody")],
    )


def _ordinary_body(body: etree._Element) -> BodySummary:
    document = body.find(_DOCUMENT)
    total_vat = _sum(texts_at(body, "DatiBeniServizi/DatiRiepilogo/Imposta"))
    declared = text_at(document, "ImportoTotaleDocumento")
    total = (
        Decimal(declared)
        if declared
        else _sum(texts_at(body, "DatiBeniServizi/DatiRiepilogo/ImponibileImporto")) + total_vat
    )
    payments = texts_at(body, "DatiPagamento/DettaglioPagamento/ImportoPagamento")
    return _body(document, total, total_vat, _sum(payments) if payments else total)


def _simplified_body(body: etree._Element) -> BodySummary:
    # FSM10 2.2.2 <Importo> includes VAT; 2.2.3 gives either the tax or the rate.
    goods = body.findall("DatiBeniServizi")
    total = _sum(texts_at(body, "DatiBeniServizi/Importo"))
    total_vat = sum((_simplified_vat(g) for g in goods), Decimal("0.00"))
    return _body(body.find(_DOCUMENT), total, total_vat, total)


def _body(document: etree._Element, total: Decimal, total_vat: Decimal, net_payable: Decimal) -> BodySummary:
    return BodySummary(
        document_type=text_at(document, "TipoDocumento"),
        number=text_at(document, "Numero"),
        date=date.fromisoformat(text_at(document, "Data")),
        currency=text_at(document, "Divisa"),
        total_document=total,
        total_vat=total_vat,
        net_payable=net_payable,
    )


def _simplified_vat(goods: etree._Element) -> Decimal:
    tax = text_at(goods, "DatiIVA/Imposta")
    if tax:
        return Decimal(tax)
    rate = Decimal(text_at(goods, "DatiIVA/Aliquota") or "0")
    amount = Decimal(text_at(goods, "Importo"))
    return (amount * rate / (100 + rate)).quantize(_CENT, ROUND_HALF_UP)  # VAT inside a gross amount


def _sum(values: Iterable[str]) -> Decimal:
    return sum((Decimal(v) for v in values), Decimal("0.00"))
