"""FatturaPA XML (FPA12, FPR12, FSM10) read into a neutral document the renderers draw."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field

from lxml import etree

from varco.fatturapa.parsing import parse_xml

# A readable copy, not the document (the XML is): bounded, so that a 5 MB file of 16,000 lines
# cannot hold a worker (and SQLite's write lock) for a minute (docs/security.md).
MAX_LINES = 200
MAX_DESCRIPTION = 200


@dataclass(frozen=True)
class PartyView:
    role: str  # "supplier" | "customer"
    name: str
    vat: str | None
    fiscal_code: str | None
    address: str
    regime: str | None = None


@dataclass(frozen=True)
class LineView:
    number: str
    description: str
    quantity: str | None
    unit_price: str | None
    total: str | None
    vat_rate: str | None
    natura: str | None


@dataclass(frozen=True)
class VatView:
    rate: str | None
    natura: str | None
    taxable: str | None
    tax: str | None
    esigibilita: str | None


@dataclass(frozen=True)
class PaymentView:
    conditions: str | None
    method: str | None
    amount: str | None
    due_date: str | None
    iban: str | None
    bank: str | None
    beneficiary: str | None


@dataclass(frozen=True)
class AttachmentView:
    index: int  # 1-based position inside the body
    name: str
    format: str | None
    description: str | None
    compression: str | None
    content: bytes = field(repr=False)


@dataclass(frozen=True)
class BodyView:
    position: int  # 1-based
    document_type: str | None
    number: str | None
    date: str | None
    currency: str | None
    total: str | None
    causale: list[str]
    lines: list[LineView]  # the first MAX_LINES
    vat: list[VatView]
    payments: list[PaymentView]
    attachments: list[AttachmentView]
    more_lines: int = 0  # lines not shown (the XML holds them)


@dataclass(frozen=True)
class InvoiceDocument:
    format: str | None  # FPA12 | FPR12 | FSM10
    transmitter: str | None
    progressive: str | None
    recipient_code: str | None
    recipient_pec: str | None
    supplier: PartyView
    customer: PartyView
    bodies: list[BodyView]


def _text(node: etree._Element | None, path: str) -> str | None:
    if node is None:
        return None
    value = node.findtext(path)
    return value.strip() if value and value.strip() else None


def _vat_id(node: etree._Element | None) -> str | None:
    country, code = _text(node, "IdFiscaleIVA/IdPaese"), _text(node, "IdFiscaleIVA/IdCodice")
    return f"{country or ''}{code}" if code else None


def _name(node: etree._Element | None) -> str:
    if node is None:
        return ""
    denominazione = _text(node, "Denominazione")
    if denominazione:
        return denominazione
    return " ".join(p for p in (_text(node, "Titolo"), _text(node, "Nome"), _text(node, "Cognome")) if p)


def _address(sede: etree._Element | None) -> str:
    street = " ".join(p for p in (_text(sede, "Indirizzo"), _text(sede, "NumeroCivico")) if p)
    town = " ".join(p for p in (_text(sede, "CAP"), _text(sede, "Comune")) if p)
    province = _text(sede, "Provincia")
    parts = [street, f"{town} ({province})" if province else town, _text(sede, "Nazione") or ""]
    return ", ".join(p for p in parts if p)


def _party_ordinary(role: str, node: etree._Element | None) -> PartyView:
    anagrafici = node.find("DatiAnagrafici") if node is not None else None
    return PartyView(
        role=role,
        name=_name(anagrafici.find("Anagrafica") if anagrafici is not None else None),
        vat=_vat_id(anagrafici),
        fiscal_code=_text(anagrafici, "CodiceFiscale"),
        address=_address(node.find("Sede") if node is not None else None),
        regime=_text(anagrafici, "RegimeFiscale"),
    )


def _party_simplified(role: str, node: etree._Element | None) -> PartyView:
    if node is None:
        return PartyView(role, "", None, None, "")
    if role == "supplier":
        return PartyView(
            role,
            _name(node),
            _vat_id(node),
            _text(node, "CodiceFiscale"),
            _address(node.find("Sede")),
            _text(node, "RegimeFiscale"),
        )
    ids, other = node.find("IdentificativiFiscali"), node.find("AltriDatiIdentificativi")
    return PartyView(
        role,
        _name(other),
        _vat_id(ids),
        _text(ids, "CodiceFiscale"),
        _address(other.find("Sede") if other is not None else None),
    )


def _attachments(body: etree._Element) -> list[AttachmentView]:
    found = []
    for index, node in enumerate(body.findall("Allegati"), start=1):
        raw = "".join((node.findtext("Attachment") or "").split())
        try:
            content = base64.b64decode(raw, validate=False)
        except (binascii.Error, ValueError):
            content = b""
        found.append(
            AttachmentView(
                index=index,
                name=_text(node, "NomeAttachment") or f"attachment-{index}",
                format=_text(node, "FormatoAttachment"),
                description=_text(node, "DescrizioneAttachment"),
                compression=_text(node, "AlgoritmoCompressione"),
                content=content,
            )
        )
    return found


def _payments(body: etree._Element) -> list[PaymentView]:
    found = []
    for pagamento in body.findall("DatiPagamento"):
        conditions = _text(pagamento, "CondizioniPagamento")
        for detail in pagamento.findall("DettaglioPagamento"):
            found.append(
                PaymentView(
                    conditions=conditions,
                    method=_text(detail, "ModalitaPagamento"),
                    amount=_text(detail, "ImportoPagamento"),
                    due_date=_text(detail, "DataScadenzaPagamento"),
                    iban=_text(detail, "IBAN"),
                    bank=_text(detail, "IstitutoFinanziario"),
                    beneficiary=_text(detail, "Beneficiario"),
                )
            )
    return found


def _body_ordinary(position: int, body: etree._Element) -> BodyView:
    general = body.find("DatiGenerali/DatiGeneraliDocumento")
    goods = body.find("DatiBeniServizi")
    found = goods.findall("DettaglioLinee") if goods is not None else []
    lines = [
        LineView(
            number=_text(line, "NumeroLinea") or "",
            description=(_text(line, "Descrizione") or "")[:MAX_DESCRIPTION],
            quantity=_text(line, "Quantita"),
            unit_price=_text(line, "PrezzoUnitario"),
            total=_text(line, "PrezzoTotale"),
            vat_rate=_text(line, "AliquotaIVA"),
            natura=_text(line, "Natura"),
        )
        for line in found[:MAX_LINES]
    ]
    vat = [
        VatView(
            rate=_text(row, "AliquotaIVA"),
            natura=_text(row, "Natura"),
            taxable=_text(row, "ImponibileImporto"),
            tax=_text(row, "Imposta"),
            esigibilita=_text(row, "EsigibilitaIVA"),
        )
        for row in (goods.findall("DatiRiepilogo") if goods is not None else [])
    ]
    return BodyView(
        position=position,
        document_type=_text(general, "TipoDocumento"),
        number=_text(general, "Numero"),
        date=_text(general, "Data"),
        currency=_text(general, "Divisa"),
        total=_text(general, "ImportoTotaleDocumento"),
        causale=[
            c.text.strip() for c in (general.findall("Causale") if general is not None else []) if c.text
        ],
        lines=lines,
        vat=vat,
        payments=_payments(body),
        attachments=_attachments(body),
        more_lines=max(0, len(found) - MAX_LINES),
    )


def _body_simplified(position: int, body: etree._Element) -> BodyView:
    general = body.find("DatiGenerali/DatiGeneraliDocumento")
    lines = []
    found = body.findall("DatiBeniServizi")
    for number, row in enumerate(found[:MAX_LINES], start=1):
        lines.append(
            LineView(
                number=str(number),
                description=(_text(row, "Descrizione") or "")[:MAX_DESCRIPTION],
                quantity=None,
                unit_price=None,
                total=_text(row, "Importo"),
                vat_rate=_text(row, "DatiIVA/Aliquota"),
                natura=_text(row, "Natura"),
            )
        )
    # The simplified format has no DatiRiepilogo: one VAT row per block, tax as stated (§ FSM10 2.2.3).
    vat = [
        VatView(
            rate=_text(row, "DatiIVA/Aliquota"),
            natura=_text(row, "Natura"),
            taxable=None,
            tax=_text(row, "DatiIVA/Imposta"),
            esigibilita=None,
        )
        for row in found[:MAX_LINES]
    ]
    return BodyView(
        position=position,
        document_type=_text(general, "TipoDocumento"),
        number=_text(general, "Numero"),
        date=_text(general, "Data"),
        currency=_text(general, "Divisa"),
        total=None,
        causale=[],
        lines=lines,
        vat=vat,
        payments=[],
        attachments=_attachments(body),
        more_lines=max(0, len(found) - MAX_LINES),
    )


def read_document(xml: bytes) -> InvoiceDocument:
    """Parse an (unsigned) invoice XML into the document the renderers draw."""
    root = parse_xml(xml)
    simplified = etree.QName(root).localname == "FatturaElettronicaSemplificata"
    header = root.find("FatturaElettronicaHeader")
    party = _party_simplified if simplified else _party_ordinary
    body = _body_simplified if simplified else _body_ordinary
    transmission = header.find("DatiTrasmissione") if header is not None else None
    transmitter = _text(transmission, "IdTrasmittente/IdCodice")
    return InvoiceDocument(
        format=root.get("versione"),
        transmitter=f"{_text(transmission, 'IdTrasmittente/IdPaese') or ''}{transmitter}"
        if transmitter
        else None,
        progressive=_text(transmission, "ProgressivoInvio"),
        recipient_code=_text(transmission, "CodiceDestinatario"),
        recipient_pec=_text(transmission, "PECDestinatario"),
        supplier=party("supplier", header.find("CedentePrestatore") if header is not None else None),
        customer=party("customer", header.find("CessionarioCommittente") if header is not None else None),
        bodies=[body(i, b) for i, b in enumerate(root.findall("FatturaElettronicaBody"), start=1)],
    )
