"""Search queries on the columns extracted at upload/reception: no XML is read to answer a search."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ARRAY, ColumnElement, Integer, Row, Select, func, literal, select, true

from varco.accounts.models import Account
from varco.core.blobs import Blob
from varco.core.dialects import Dialect, dialect_of
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice, InvoiceBody, Notification
from varco.search.dates import EARLIEST, LATEST
from varco.search.models import InvoiceMonthCount
from varco.search.params import Filters

ROW_COLUMNS = (
    Invoice.id,
    Invoice.filename,
    Invoice.sdi_id,
    Invoice.sender_description,
    Invoice.sender_country,
    Invoice.sender_vat,
    Invoice.sender_fiscal_code,
    Invoice.receiver_description,
    Invoice.receiver_country,
    Invoice.receiver_vat,
    Invoice.receiver_fiscal_code,
    Invoice.format,
    Invoice.direction,
    Invoice.state,
    Invoice.created_at,
    Invoice.updated_at,
    Invoice.pdd_available,
    Invoice.sdi_errors,
    Account.username,
)
BODY_COLUMNS = (
    InvoiceBody.invoice_id.label("body_invoice_id"),
    InvoiceBody.document_type,
    InvoiceBody.number,
    InvoiceBody.invoice_date,
    InvoiceBody.total_document,
    InvoiceBody.total_vat,
    InvoiceBody.net_payable,
)
NEWEST_FIRST = (Invoice.created_at.desc(), Invoice.id.desc())


@dataclass
class PageRow:
    """One file of a page as plain rows: the invoice columns (+ owner username) and its bodies."""

    invoice: Row[Any]
    bodies: list[Row[Any]] = field(default_factory=list)


def _filters(direction: str, f: Filters, dialect: Dialect) -> list[ColumnElement[bool]]:
    """Everything a list narrows on but the tenancy."""
    where: list[ColumnElement[bool]] = [Invoice.direction == direction]
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
    )
    where.extend(column == value for column, value in equal if value is not None)
    if f.state is not None:
        # Without statistics SQLite rates `state = ?` on ix_invoices_state_updated above the search
        # index when the tenancy is an IN list, and read every file of that state in the database
        # (80,000 of 200,000: 110 ms); unindexed, the search index, which holds `state`, checks it
        # during its scan (docs/search.md, "Query plans").
        where.append(dialect.unindexed(Invoice.state) == f.state)
    if f.document_type is not None:
        # "TD01 TD04": types are four characters (TDnn, params.document_type), so a substring
        # match is exact, and it is read from the search index (no join with the bodies).
        where.append(Invoice.document_types.contains(f.document_type))
    return where


def _conditions(
    account_ids: Sequence[int], direction: str, f: Filters, dialect: Dialect
) -> list[ColumnElement[bool]]:
    return [dialect.in_ids(account_ids)(Invoice.account_id), *_filters(direction, f, dialect)]


def _month(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def _next_month(value: datetime) -> datetime:
    return (value + timedelta(days=32)).replace(day=1)


def whole_months(f: Filters) -> tuple[datetime | None, datetime | None] | None:
    """[start, end) of the whole UTC months inside the creation bounds, when the total may be read
    from `invoice_month_counts`: no filter but the creation dates, and at least one whole month.
    None (unbounded) on a side without a bound."""
    if replace(f, created_from=None, created_to=None) != Filters():
        return None
    start = end = None
    try:
        if f.created_from is not None and f.created_from > EARLIEST:
            start = _month(f.created_from)
            if start != f.created_from:
                start = _next_month(start)
        if f.created_to is not None and f.created_to < LATEST:
            end = _month(f.created_to + timedelta(microseconds=1))  # inclusive bound: + 1 µs
    except OverflowError:  # December of year 9999: count file by file
        return None
    if start is not None and end is not None and start >= end:
        return None
    return start, end


def _yyyymm(value: datetime) -> int:
    return value.year * 100 + value.month


class SearchRepository:
    def __init__(self, session: UnitOfWork) -> None:
        self.session = session
        self.dialect = dialect_of(session)

    def _count(self, account_ids: Sequence[int], direction: str, filters: Filters) -> Select[tuple[int]]:
        """Files matching, counted inside the search index (`count(*)`: nothing but the index entries)."""
        return (
            select(func.count())
            .select_from(Invoice)
            .where(*_conditions(account_ids, direction, filters, self.dialect))
        )

    def count(self, account_ids: Sequence[int], direction: str, filters: Filters) -> int:
        return self.session.scalar(self._count(account_ids, direction, filters)) or 0

    def month_total(
        self,
        account_ids: Sequence[int],
        direction: str,
        filters: Filters,
        months: tuple[datetime | None, datetime | None],
    ) -> int:
        """Exact total in one statement: the whole months from the counts table, the partial months
        at either end counted in the search index."""
        tenancy = self.dialect.in_ids(account_ids)
        start, end = months
        counted = [tenancy(InvoiceMonthCount.account_id), InvoiceMonthCount.direction == direction]
        if start is not None:
            counted.append(InvoiceMonthCount.month >= _yyyymm(start))
        if end is not None:
            counted.append(InvoiceMonthCount.month < _yyyymm(end))
        whole = select(func.coalesce(func.sum(InvoiceMonthCount.count), 0)).where(*counted)
        parts = [whole.scalar_subquery()]
        edge = [tenancy(Invoice.account_id), Invoice.direction == direction]
        if filters.created_from is not None and filters.created_from > EARLIEST:
            assert start is not None
            parts.append(
                select(func.count())
                .where(*edge, Invoice.created_at >= filters.created_from, Invoice.created_at < start)
                .scalar_subquery()
            )
        if filters.created_to is not None and filters.created_to < LATEST:
            assert end is not None
            parts.append(
                select(func.count())
                .where(*edge, Invoice.created_at >= end, Invoice.created_at <= filters.created_to)
                .scalar_subquery()
            )
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return int(self.session.scalar(select(total)) or 0)

    def page(
        self, account_ids: Sequence[int], direction: str, filters: Filters, offset: int, limit: int
    ) -> tuple[int, list[PageRow]]:
        """(files matching, rows of one page), newest first; the id breaks ties.

        Ids first, then only the page's rows and bodies (one statement). The total comes either with
        the ids, as a scalar subquery counting in ix_invoices_search_window (the 10-day windows of
        version 2), or, for ranges of whole months without other filters (version 1 without dates),
        from the month counts; the ids then come from one short backward index scan per taxpayer
        instead of sorting every file of the tenant.

        Not `count(*) OVER ()`: SQLite computes a window function by copying every matching row
        into a subquery and sorting them all for the ORDER BY (100,000 files in a window: 110 ms
        for a page of 10). The uncorrelated subquery is run once (PostgreSQL: an InitPlan) as an
        index-only count, and the page itself stays a LIMIT read of the index in order (one
        taxpayer: backwards, no sort; several: a top-N sort) - the same statement, so the total and
        the page come from the same snapshot as before. docs/search.md, "Query plans".
        """
        months = whole_months(filters)
        if months is None:
            # correlate(None): counted on its own, never tied to the outer row (same table)
            total_of = self._count(account_ids, direction, filters).correlate(None).scalar_subquery()
            found = self.session.execute(
                select(Invoice.id, total_of)
                .where(*_conditions(account_ids, direction, filters, self.dialect))
                .order_by(*NEWEST_FIRST)
                .offset(offset)
                .limit(limit)
            ).all()
            if not found:
                return (self.count(account_ids, direction, filters) if offset else 0), []
            total, ids = found[0][1], [invoice_id for invoice_id, _ in found]
        else:
            total = self.month_total(account_ids, direction, filters, months)
            if offset >= total:
                return total, []
            ids = self._newest_ids(account_ids, direction, filters, offset, limit)
        return total, self.rows(ids)

    def _newest_ids(
        self, account_ids: Sequence[int], direction: str, filters: Filters, offset: int, limit: int
    ) -> list[int]:
        if self.dialect.one_writer or len(account_ids) == 1:
            # One taxpayer: the index order is the answer order (a backward scan, no sort).
            query = select(Invoice.id).where(*_conditions(account_ids, direction, filters, self.dialect))
            return list(self.session.scalars(query.order_by(*NEWEST_FIRST).offset(offset).limit(limit)))
        # PostgreSQL cannot merge the per-taxpayer ranges of an IN list in index order; a LATERAL
        # top-(offset+limit) per taxpayer is read backwards from the index, then merged.
        taxpayers = (
            func.unnest(literal(list(account_ids), ARRAY(Integer)))
            .table_valued("account_id")
            .render_derived(name="taxpayers")
        )
        newest = (
            select(Invoice.id, Invoice.created_at)
            .where(Invoice.account_id == taxpayers.c.account_id, *_filters(direction, filters, self.dialect))
            .order_by(*NEWEST_FIRST)
            .limit(offset + limit)
            .lateral("newest")
        )
        query = (
            select(newest.c.id)
            .select_from(taxpayers.join(newest, true()))
            .order_by(newest.c.created_at.desc(), newest.c.id.desc())
            .offset(offset)
            .limit(limit)
        )
        return list(self.session.scalars(query))

    def rows(self, ids: Sequence[int]) -> list[PageRow]:
        """The page's files, in the order of `ids`, with owner usernames and bodies: one statement,
        plain rows (no ORM objects)."""
        query = (
            select(*ROW_COLUMNS, *BODY_COLUMNS)
            .join(Account, Account.id == Invoice.account_id)
            .outerjoin(InvoiceBody, InvoiceBody.invoice_id == Invoice.id)
            .where(self.dialect.in_ids(ids)(Invoice.id))
            .order_by(Invoice.id, InvoiceBody.position)
        )
        by_id: dict[int, PageRow] = {}
        for row in self.session.execute(query):
            found = by_id.get(row.id)
            if found is None:
                found = by_id[row.id] = PageRow(row)
            if row.body_invoice_id is not None:
                found.bodies.append(row)
        return [by_id[i] for i in ids if i in by_id]

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
