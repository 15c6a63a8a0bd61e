"""Preservation queries: packages, and the invoice facts a package records."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import and_, or_, select

from varco.core.blobs import Blob
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice, Notification
from varco.preservation.models import PreservationPackage


class PreservationRepository:
    def __init__(self, session: UnitOfWork) -> None:
        self.session = session

    def invoice(self, invoice_id: int) -> Invoice | None:
        return self.session.get(Invoice, invoice_id)

    def notifications(self, invoice_id: int) -> list[Notification]:
        query = select(Notification).where(Notification.invoice_id == invoice_id).order_by(Notification.id)
        return list(self.session.scalars(query))

    def content(self, blob_id: int) -> bytes:
        blob = self.session.get(Blob, blob_id)
        if blob is None:
            raise LookupError(f"stored file {blob_id} is missing")
        return blob.content

    def latest_for_invoice(self, invoice_id: int) -> PreservationPackage | None:
        query = (
            select(PreservationPackage)
            .where(PreservationPackage.invoice_id == invoice_id)
            .order_by(PreservationPackage.version.desc())
            .limit(1)
        )
        return self.session.scalar(query)

    def latest_for_invoices(self, invoice_ids: Sequence[int]) -> dict[int, PreservationPackage]:
        """The newest package of each of the invoices that has one."""
        query = (
            select(PreservationPackage)
            .where(PreservationPackage.invoice_id.in_(invoice_ids))
            .order_by(PreservationPackage.invoice_id, PreservationPackage.version)
        )
        return {p.invoice_id: p for p in self.session.scalars(query) if p.invoice_id is not None}  # last wins

    def chain_head(self, account_id: int) -> PreservationPackage | None:
        query = (
            select(PreservationPackage)
            .where(PreservationPackage.account_id == account_id)
            .order_by(PreservationPackage.sequence.desc())
            .limit(1)
        )
        return self.session.scalar(query)

    def chain(self, account_id: int) -> list[PreservationPackage]:
        query = (
            select(PreservationPackage)
            .where(PreservationPackage.account_id == account_id)
            .order_by(PreservationPackage.sequence)
        )
        return list(self.session.scalars(query))

    def unsealed_ids(self, states: frozenset[int], after_delivery: int, limit: int) -> list[int]:
        """Invoices in a sealable state without a package (the reconciler's work list)."""
        sealable = or_(
            Invoice.state.in_(sorted(states)),
            and_(Invoice.state == after_delivery, Invoice.format != "FPA12"),
        )
        query = (
            select(Invoice.id)
            .where(Invoice.pdd_available.is_(False), sealable)
            .order_by(Invoice.id)
            .limit(limit)
        )
        return list(self.session.scalars(query))

    def latest_for_communication(self, comfin_request_id: int) -> PreservationPackage | None:
        query = (
            select(PreservationPackage)
            .where(PreservationPackage.comfin_request_id == comfin_request_id)
            .order_by(PreservationPackage.version.desc())
            .limit(1)
        )
        return self.session.scalar(query)
