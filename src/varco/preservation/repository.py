"""Preservation queries: packages, and the invoice facts a package records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import and_, bindparam, or_, select, update

from varco.accounts.models import Account
from varco.core import blobs
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice, InvoiceBody, Notification
from varco.preservation.models import PreservationPackage


@dataclass(frozen=True)
class InvoiceFacts:
    """What sealing reads of an invoice: a Core read of these columns, not the whole ORM invoice with
    its bodies (every delivered invoice is sealed once, in the periodic work)."""

    id: int
    account_id: int
    filename: str
    blob_id: int
    sdi_id: str | None
    direction: str
    format: str
    state: int
    sender_country: str | None
    sender_vat: str | None
    receiver_country: str | None
    receiver_vat: str | None
    numbers: tuple[str, ...]  # of its bodies, in order
    owner: tuple[str, str | None, str | None] | None  # the account's username, country, VAT code


# Statements built once: sealing runs them for every invoice (building one costs more than running it).
_FACTS = select(*(getattr(Invoice, name) for name in list(InvoiceFacts.__dataclass_fields__)[:-2])).where(
    Invoice.id == bindparam("id")
)
_NUMBERS = (
    select(InvoiceBody.number).where(InvoiceBody.invoice_id == bindparam("id")).order_by(InvoiceBody.position)
)
_OWNER = select(Account.username, Account.country_code, Account.vat_code).where(Account.id == bindparam("id"))
_MARK_SEALED = update(Invoice.__table__).where(Invoice.__table__.c.id == bindparam("invoice_id"))
_NOTIFICATIONS = (
    select(Notification).where(Notification.invoice_id == bindparam("invoice_id")).order_by(Notification.id)
)
_LATEST_FOR_INVOICE = (
    select(PreservationPackage)
    .where(PreservationPackage.invoice_id == bindparam("invoice_id"))
    .order_by(PreservationPackage.version.desc())
    .limit(1)
)
_CHAIN_HEAD = (
    select(PreservationPackage)
    .where(PreservationPackage.account_id == bindparam("account_id"))
    .order_by(PreservationPackage.sequence.desc())
    .limit(1)
)


class PreservationRepository:
    def __init__(self, session: UnitOfWork) -> None:
        self.session = session

    def invoice(self, invoice_id: int) -> InvoiceFacts | None:
        connection = self.session.connection()
        row = connection.execute(_FACTS, {"id": invoice_id}).first()
        if row is None:
            return None
        numbers = tuple(connection.execute(_NUMBERS, {"id": invoice_id}).scalars())
        owner = connection.execute(_OWNER, {"id": row.account_id}).first()
        return InvoiceFacts(*row, numbers=numbers, owner=tuple(owner) if owner else None)

    def mark_sealed(self, invoice_id: int) -> None:
        """The invoice's package exists: `pdd_available` for the API, out of the unsealed list."""
        self.session.connection().execute(_MARK_SEALED.values(pdd_available=True), {"invoice_id": invoice_id})

    def notifications(self, invoice_id: int) -> list[Notification]:
        return list(self.session.scalars(_NOTIFICATIONS, {"invoice_id": invoice_id}))

    def content(self, blob_id: int) -> bytes:
        try:
            return blobs.content(self.session, blob_id)
        except KeyError:
            raise LookupError(f"stored file {blob_id} is missing") from None

    def latest_for_invoice(self, invoice_id: int) -> PreservationPackage | None:
        return self.session.scalar(_LATEST_FOR_INVOICE, {"invoice_id": invoice_id})

    def latest_for_invoices(self, invoice_ids: Sequence[int]) -> dict[int, PreservationPackage]:
        """The newest package of each of the invoices that has one."""
        query = (
            select(PreservationPackage)
            .where(PreservationPackage.invoice_id.in_(invoice_ids))
            .order_by(PreservationPackage.invoice_id, PreservationPackage.version)
        )
        return {p.invoice_id: p for p in self.session.scalars(query) if p.invoice_id is not None}  # last wins

    def chain_head(self, account_id: int) -> PreservationPackage | None:
        return self.session.scalar(_CHAIN_HEAD, {"account_id": account_id})

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
