"""Panel read helpers the API has no endpoint for: state history of an invoice, an invoice's stored file."""

from __future__ import annotations

from sqlalchemy import select

from varco.core.blobs import Blob
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice, InvoiceTransition
from varco.invoices.states import InvoiceState


def state_history(session: UnitOfWork, invoice: Invoice) -> list[tuple[InvoiceTransition, str]]:
    """Transitions oldest first, each with its state label (decisions.md "Invoice states")."""
    rows = session.scalars(
        select(InvoiceTransition)
        .where(InvoiceTransition.invoice_id == invoice.id)
        .order_by(InvoiceTransition.id)
    )
    return [(row, InvoiceState(row.to_state).label) for row in rows]


def stored_file(session: UnitOfWork, invoice: Invoice) -> bytes:
    """The file as stored (signed files keep their signature)."""
    blob = session.get(Blob, invoice.blob_id)
    assert blob is not None
    return blob.content
