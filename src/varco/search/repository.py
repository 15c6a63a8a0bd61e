"""Search queries on the columns extracted at upload/reception: no XML is read to answer a search."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement, exists, func, select
from sqlalchemy.orm import Session

from varco.accounts.models import Account
from varco.core.blobs import Blob
from varco.invoices.models import Invoice, InvoiceBody, Notification
from varco.search.params import Filters


def _conditions(account_ids: Sequence[int], direction: str, f: Filters) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = [Invoice.account_id.in_(account_ids), Invoice.direction == direction]
    bounds = (
        (Invoice.created_at, f.created_from, f.created_to),
        (Invoice.updated_at, f.modified_from, f.modified_to),
    )
    for column, low, high in bounds:
        if low is not None:
            where.append(column >= low)
        if high is not None:
            where.append(column <= high)
    equal = (
        (Invoice.sender_country, f.sender_country),
        (Invoice.sender_vat, f.sender_vat),
        (Invoice.sender_fiscal_code, f.sender_fiscal_code),
        (Invoice.receiver_country, f.receiver_country),
        (Invoice.receiver_vat, f.receiver_vat),
        (Invoice.receiver_fiscal_code, f.receiver_fiscal_code),
        (Invoice.state, f.state),
    )
    where.extend(column == value for column, value in equal if value is not None)
    if f.document_type is not None:
        where.append(
            exists().where(InvoiceBody.invoice_id == Invoice.id, InvoiceBody.document_type == f.document_type)
        )
    return where


class SearchRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def count(self, account_ids: Sequence[int], direction: str, filters: Filters) -> int:
        query = select(func.count(Invoice.id)).where(*_conditions(account_ids, direction, filters))
        return self.session.scalar(query) or 0

    def page(
        self, account_ids: Sequence[int], direction: str, filters: Filters, offset: int, limit: int
    ) -> tuple[int, list[tuple[Invoice, str]]]:
        """(files matching, [(invoice, owner username)]) of one page, newest first; the id breaks ties.

        Ids first, with the total as a window count in the same statement (an index-only scan of
        ix_invoices_search_window when the filters are the window and tenancy); then only the page's
        rows are read. A page past the end has no rows to carry the total: it is counted apart.
        """
        ids_query = (
            select(Invoice.id, func.count().over())
            .where(*_conditions(account_ids, direction, filters))
            .order_by(Invoice.created_at.desc(), Invoice.id.desc())
            .offset(offset)
            .limit(limit)
        )
        found = self.session.execute(ids_query).all()
        if not found:
            return (self.count(account_ids, direction, filters) if offset else 0), []
        ids = [invoice_id for invoice_id, _ in found]
        query = (
            select(Invoice, Account.username)
            .join(Account, Account.id == Invoice.account_id)
            .where(Invoice.id.in_(ids))
        )
        rows = {invoice.id: (invoice, username) for invoice, username in self.session.execute(query)}
        return found[0][1], [rows[i] for i in ids if i in rows]

    def one(
        self,
        account_ids: Sequence[int],
        direction: str,
        *,
        invoice_id: int | None = None,
        filename: str | None = None,
        sdi_id: str | None = None,
    ) -> Invoice | None:
        query = select(Invoice).where(Invoice.account_id.in_(account_ids), Invoice.direction == direction)
        if invoice_id is not None:
            query = query.where(Invoice.id == invoice_id)
        if filename is not None:
            query = query.where(Invoice.filename == filename)
        if sdi_id is not None:
            query = query.where(Invoice.sdi_id == sdi_id)
        return self.session.scalar(query.order_by(Invoice.id).limit(1))

    def many(self, account_ids: Sequence[int], direction: str, invoice_ids: Sequence[int]) -> list[Invoice]:
        query = select(Invoice).where(
            Invoice.account_id.in_(account_ids), Invoice.direction == direction, Invoice.id.in_(invoice_ids)
        )
        return list(self.session.scalars(query.order_by(Invoice.id)))

    def by_ids(self, invoice_ids: Sequence[int]) -> list[Invoice]:
        return list(
            self.session.scalars(select(Invoice).where(Invoice.id.in_(invoice_ids)).order_by(Invoice.id))
        )

    def notifications(self, invoice_ids: Sequence[int]) -> list[Notification]:
        query = select(Notification).where(Notification.invoice_id.in_(invoice_ids))
        return list(self.session.scalars(query.order_by(Notification.invoice_id, Notification.id)))

    def notification(
        self, account_ids: Sequence[int], direction: str, filename: str
    ) -> tuple[Notification, Invoice] | None:
        query = (
            select(Notification, Invoice)
            .join(Invoice, Invoice.id == Notification.invoice_id)
            .where(
                Notification.filename == filename,
                Invoice.account_id.in_(account_ids),
                Invoice.direction == direction,
            )
        )
        row = self.session.execute(query).first()
        return (row[0], row[1]) if row else None

    def usernames(self, account_ids: Sequence[int]) -> dict[int, str]:
        """Owner usernames in one query (accounts.service has no batch lookup; read-only)."""
        if not account_ids:
            return {}
        rows = self.session.execute(select(Account.id, Account.username).where(Account.id.in_(account_ids)))
        return {account_id: username for account_id, username in rows}

    def contents(self, blob_ids: Sequence[int]) -> dict[int, bytes]:
        if not blob_ids:
            return {}
        rows = self.session.execute(select(Blob.id, Blob.content).where(Blob.id.in_(blob_ids)))
        return {blob_id: content for blob_id, content in rows}
