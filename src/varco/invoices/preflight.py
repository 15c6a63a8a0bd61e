"""preflightSdiControls (varco's addition, docs/sdi-controls.md): for an account that asks, an upload
answers 0096 with the Exchange System's control that would refuse the file later, instead of the
SDI's NS hours after. The sender's history for 00404 is its invoices in varco that were not refused."""

from __future__ import annotations

from sqlalchemy import select

from varco import fatturapa
from varco.core.uow import UnitOfWork
from varco.fatturapa.sdi_controls import InvoiceKey, SdiFacts, check_sdi
from varco.invoices.models import Invoice, InvoiceBody
from varco.invoices.states import InvoiceState

_REFUSED = (InvoiceState.ERRORE_ELABORAZIONE, InvoiceState.SCARTATA)


def sdi_findings(session: UnitOfWork, report: fatturapa.Report, size: int) -> list[fatturapa.Finding]:
    """The SDI controls a file fails (the file name is varco's to give: 00001/00002 do not apply)."""
    return check_sdi(report, SdiFacts(invoice_seen=lambda key: _sent_before(session, key), size=size))


def _sent_before(session: UnitOfWork, key: InvoiceKey) -> bool:
    query = (
        select(Invoice.id)
        .join(InvoiceBody, InvoiceBody.invoice_id == Invoice.id)
        .where(
            Invoice.direction == "out",
            Invoice.sender_country == key.supplier[:2],
            Invoice.sender_vat == key.supplier[2:],
            Invoice.state.not_in(_REFUSED),
            InvoiceBody.document_type == key.document_type,
            InvoiceBody.number == key.number,
            InvoiceBody.invoice_date == key.date,
        )
        .limit(1)
    )
    return session.scalar(query) is not None
