"""Invoice queries."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session, lazyload

from varco.invoices.models import Invoice, InvoiceTransition, Notification


class InvoiceRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, invoice: Invoice) -> Invoice:
        self.session.add(invoice)
        self.session.flush()
        return invoice

    def get(self, invoice_id: int) -> Invoice | None:
        return self.session.get(Invoice, invoice_id)

    def get_for_update(self, invoice_id: int) -> Invoice | None:
        # FOR UPDATE on PostgreSQL; on SQLite the transaction already holds the write lock.
        return self.session.get(Invoice, invoice_id, with_for_update=True, populate_existing=True)

    def by_filename(self, filename: str) -> Invoice | None:
        return self.session.scalar(select(Invoice).where(Invoice.filename == filename))

    def by_sdi_id(self, sdi_id: str) -> Invoice | None:
        return self.session.scalar(select(Invoice).where(Invoice.sdi_id == sdi_id))

    def has_transition(self, invoice_id: int, key: str) -> bool:
        query = select(InvoiceTransition.id).where(
            InvoiceTransition.invoice_id == invoice_id, InvoiceTransition.key == key
        )
        return self.session.scalar(query) is not None

    def add_transition(self, transition: InvoiceTransition) -> None:
        self.session.add(transition)
        self.session.flush()

    def transitions(self, invoice_id: int) -> list[InvoiceTransition]:
        query = select(InvoiceTransition).where(InvoiceTransition.invoice_id == invoice_id)
        return list(self.session.scalars(query.order_by(InvoiceTransition.id)))

    def notification_by_filename(self, filename: str) -> Notification | None:
        return self.session.scalar(select(Notification).where(Notification.filename == filename))

    def notifications(self, invoice_id: int) -> list[Notification]:
        query = select(Notification).where(Notification.invoice_id == invoice_id).order_by(Notification.id)
        return list(self.session.scalars(query))

    def latest_notification(self, invoice_id: int, type_: str) -> Notification | None:
        query = (
            select(Notification)
            .where(Notification.invoice_id == invoice_id, Notification.type == type_)
            .order_by(Notification.id.desc())
            .limit(1)
        )
        return self.session.scalar(query)

    def count_notifications(self, invoice_id: int, type_: str) -> int:
        query = select(func.count(Notification.id)).where(
            Notification.invoice_id == invoice_id, Notification.type == type_
        )
        return self.session.scalar(query) or 0

    def ids_in_state(
        self, state: int, *, before: datetime, direction: str = "out", limit: int = 1000
    ) -> list[int]:
        query = (
            select(Invoice.id)
            .where(Invoice.state == state, Invoice.direction == direction, Invoice.updated_at <= before)
            .order_by(Invoice.id)
            .limit(limit)
        )
        return list(self.session.scalars(query))

    def in_process_with_content(self, account_id: int, sha256: str, since: datetime) -> Invoice | None:
        """§7.2 0034: the same content sent recently and still awaiting processing."""
        query = select(Invoice).where(
            Invoice.account_id == account_id,
            Invoice.content_sha256 == sha256,
            Invoice.direction == "out",
            Invoice.state == 1,
            Invoice.created_at >= since,
        )
        return self.session.scalar(query.limit(1))

    def find(
        self, *, sdi_id: str | None = None, filename: str | None = None, direction: str | None = None
    ) -> Invoice | None:
        """One invoice by IdentificativoSdI and/or file name, optionally of one direction."""
        query = select(Invoice).options(lazyload(Invoice.bodies))  # bodies on access only
        if sdi_id is not None:
            query = query.where(Invoice.sdi_id == sdi_id)
        if filename is not None:
            query = query.where(Invoice.filename == filename)
        if direction is not None:
            query = query.where(Invoice.direction == direction)
        return self.session.scalar(query.order_by(Invoice.id).limit(1))
