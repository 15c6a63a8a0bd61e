"""Models to contract records: invoice records (one per SDI file) and notification records."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from sqlalchemy import Row

from varco.invoices.models import Invoice, Notification
from varco.invoices.states import InvoiceState
from varco.search.dates import format_day, format_instant
from varco.search.schemas import InvoiceRecord, NotificationRecord

S = InvoiceState
STATUS_DESCRIPTIONS: dict[InvoiceState, str] = {
    S.PRESA_IN_CARICO: "Accepted, waiting for processing; not yet transmitted",
    S.ERRORE_ELABORAZIONE: "Processing error: not sent to the Exchange System (see sdiErrors)",
    S.INVIATA: "Sent to the Exchange System",
    S.SCARTATA: "Discarded by the Exchange System (NS, see sdiErrors)",
    S.NON_CONSEGNATA: "Not delivered (MC): made available to the recipient by the Exchange System",
    S.RECAPITO_IMPOSSIBILE: "Delivery impossible (AT)",
    S.CONSEGNATA: "Delivered to the recipient (RC)",
    S.ACCETTATA: "Accepted by the recipient (NE EC01)",
    S.RIFIUTATA: "Refused by the recipient (NE EC02)",
    S.DECORRENZA_TERMINI: "No outcome from the recipient within the terms (DT)",
    S.RICEVUTA: "Received from the Exchange System",
}


def b64(content: bytes | None) -> str | None:
    return base64.b64encode(content).decode() if content is not None else None


def _amount(value: Decimal | None) -> float | None:
    return float(value) if value is not None else None


def invoice_fields(
    invoice: Invoice | Row[Any],
    username: str | None,
    file: bytes | None = None,
    bodies: Iterable[Any] | None = None,
) -> dict[str, Any]:
    """The fields of a record, as plain data, from an `Invoice` or a row with the same column names
    (a list page: repository.PageRow). Plain dicts, validated once per page by pydantic's core:
    cheaper than building 100 × 5 model objects in Python."""
    state = InvoiceState(invoice.state)
    status, description = state.label, STATUS_DESCRIPTIONS[state]
    return {
        "id": str(invoice.id),
        "filename": invoice.filename,
        "idSdi": invoice.sdi_id,
        "sender": {
            "description": invoice.sender_description,
            "countryCode": invoice.sender_country,
            "vatCode": invoice.sender_vat,
            "fiscalCode": invoice.sender_fiscal_code,
        },
        "receiver": {
            "description": invoice.receiver_description,
            "countryCode": invoice.receiver_country,
            "vatCode": invoice.receiver_vat,
            "fiscalCode": invoice.receiver_fiscal_code,
        },
        "invoiceType": invoice.format,
        "docType": invoice.direction,
        "username": username,
        "creationDate": format_instant(invoice.created_at),
        "lastUpdate": format_instant(invoice.updated_at),
        "pddAvailable": invoice.pdd_available,
        "file": b64(file),
        "pdfFile": None,  # set by search.service.detail when includePdf=true (varco.rendering)
        "channelGroup": None,  # varco has no sales channels nor shops (schemas.InvoiceRecord)
        "shopName": None,
        "sdiErrors": [
            {"code": e.get("code", ""), "description": e.get("description", "")}
            for e in invoice.sdi_errors or []
        ],
        "invoices": [
            {
                "invoiceDate": format_day(body.invoice_date),
                "number": body.number,
                "documentType": body.document_type,
                "status": status,
                "statusDescription": description,
                "totalDocument": _amount(body.total_document),
                "totalVat": _amount(body.total_vat),
                "netPayable": _amount(body.net_payable),
            }
            for body in (invoice.bodies if bodies is None else bodies)
        ],
    }


def invoice_record(
    invoice: Invoice,
    username: str | None,
    file: bytes | None = None,
    record: type[InvoiceRecord] = InvoiceRecord,
    **extra: object,
) -> InvoiceRecord:
    return record.model_validate({**invoice_fields(invoice, username, file), **extra})


def notification_record(notification: Notification, content: bytes) -> NotificationRecord:
    return NotificationRecord(
        date=format_instant(notification.created_at),
        docType=notification.type,
        file=b64(content),
        filename=notification.filename,
        invoiceId=str(notification.invoice_id),
        notificationDate=format_instant(notification.notification_date),
        number=notification.number,
        result=notification.result,
    )
