"""The Excel-compatible report of a bulk download (.xlsx, openpyxl): one row per invoice of each file."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from datetime import datetime

from openpyxl import Workbook
from openpyxl.utils import get_column_letter

from varco.invoices.models import Invoice
from varco.invoices.states import InvoiceState
from varco.search.dates import ROME

COLUMNS = (
    ("id", 10),
    ("filename", 30),
    ("idSdi", 14),
    ("docType", 8),
    ("invoiceType", 11),
    ("username", 20),
    ("senderDescription", 30),
    ("senderCountry", 8),
    ("senderVatCode", 14),
    ("senderFiscalCode", 18),
    ("receiverDescription", 30),
    ("receiverCountry", 8),
    ("receiverVatCode", 14),
    ("receiverFiscalCode", 18),
    ("number", 14),
    ("invoiceDate", 12),
    ("documentType", 8),
    ("totalDocument", 14),
    ("totalVat", 12),
    ("netPayable", 14),
    ("status", 20),
    ("creationDate", 20),
    ("lastUpdate", 20),
    ("pddAvailable", 8),
)


def _local(value: datetime | None) -> datetime | None:
    """Excel has no time zones: Italian wall-clock time."""
    return value.astimezone(ROME).replace(tzinfo=None) if value is not None else None


def build_report(invoices: Sequence[Invoice], usernames: Mapping[int, str]) -> bytes:
    workbook = Workbook()
    sheet = workbook.active
    sheet.title = "invoices"
    sheet.append([name for name, _ in COLUMNS])
    for invoice in invoices:
        head = [
            str(invoice.id),
            invoice.filename,
            invoice.sdi_id,
            invoice.direction,
            invoice.format,
            usernames.get(invoice.account_id),
            invoice.sender_description,
            invoice.sender_country,
            invoice.sender_vat,
            invoice.sender_fiscal_code,
            invoice.receiver_description,
            invoice.receiver_country,
            invoice.receiver_vat,
            invoice.receiver_fiscal_code,
        ]
        tail = [
            InvoiceState(invoice.state).label,
            _local(invoice.created_at),
            _local(invoice.updated_at),
            invoice.pdd_available,
        ]
        for body in invoice.bodies or [None]:
            middle = (
                [
                    body.number,
                    body.invoice_date,
                    body.document_type,
                    body.total_document,
                    body.total_vat,
                    body.net_payable,
                ]
                if body is not None
                else [None] * 6
            )
            sheet.append([*head, *middle, *tail])
    for index, (_, width) in enumerate(COLUMNS, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = width
    sheet.freeze_panes = "A2"
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()
