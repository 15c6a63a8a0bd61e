"""Multiseller queries: a Premium user's assignors (delegations to it) and the report's figures.

Every query is scoped to one Premium user (`delegate_id`): the tenancy of §4.1 ("the assignors
of the Premium user that owns the token").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, case, func, select

from varco.accounts.models import Account, Delegation
from varco.accounts.multisellers.models import MultisellerReport
from varco.core.blobs import StorageUsage
from varco.core.models import JobRow
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice, Notification


@dataclass(frozen=True)
class Filters:
    country_code: str | None = None
    vat_code: str | None = None
    status: str | None = None


@dataclass(frozen=True)
class InvoiceCounts:
    sent_total: int = 0
    sent_this_year: int = 0
    received_total: int = 0
    received_this_year: int = 0


class MultisellerRepository:
    def __init__(self, session: UnitOfWork) -> None:
        self.session = session

    # Assignors ------------------------------------------------------------------------------------

    def _assignors(self, premium_id: int, filters: Filters) -> Select[tuple[Delegation, Account]]:
        query = (
            select(Delegation, Account)
            .join(Account, Account.id == Delegation.delegator_id)
            .where(Delegation.delegate_id == premium_id)
        )
        if filters.country_code is not None:
            query = query.where(Account.country_code == filters.country_code)
        if filters.vat_code is not None:
            query = query.where(Account.vat_code == filters.vat_code)
        if filters.status is not None:
            query = query.where(Delegation.status == filters.status)
        return query

    def count(self, premium_id: int, filters: Filters) -> int:
        inner = self._assignors(premium_id, filters).with_only_columns(Delegation.id).subquery()
        return self.session.scalar(select(func.count()).select_from(inner)) or 0

    def page(
        self, premium_id: int, filters: Filters, offset: int, limit: int
    ) -> list[tuple[Delegation, Account]]:
        query = self._assignors(premium_id, filters).order_by(Delegation.id).offset(offset).limit(limit)
        return [(row[0], row[1]) for row in self.session.execute(query)]

    def all(self, premium_id: int) -> list[tuple[Delegation, Account]]:
        query = self._assignors(premium_id, Filters()).order_by(Delegation.id)
        return [(row[0], row[1]) for row in self.session.execute(query)]

    def one(self, premium_id: int, delegation_id: int) -> tuple[Delegation, Account] | None:
        row = self.session.execute(
            self._assignors(premium_id, Filters()).where(Delegation.id == delegation_id)
        ).first()
        return (row[0], row[1]) if row else None

    # Figures, grouped by assignor (one query each, whatever the number of assignors) -----------------

    def _assignor_ids(self, premium_id: int):  # a scalar subquery
        return select(Delegation.delegator_id).where(Delegation.delegate_id == premium_id).scalar_subquery()

    def used_bytes(
        self, premium_id: int | None = None, account_ids: list[int] | None = None
    ) -> dict[int, int]:
        """Stored bytes per account: `core.blobs.used_bytes` for many accounts in one query."""
        query = select(StorageUsage.account_id, StorageUsage.bytes)
        if account_ids is not None:
            query = query.where(StorageUsage.account_id.in_(account_ids))
        if premium_id is not None:
            query = query.where(StorageUsage.account_id.in_(self._assignor_ids(premium_id)))
        return {row[0]: int(row[1] or 0) for row in self.session.execute(query)}

    def invoice_counts(self, premium_id: int, year_start: datetime) -> dict[int, InvoiceCounts]:
        this_year = func.sum(case((Invoice.created_at >= year_start, 1), else_=0))
        query = (
            select(Invoice.account_id, Invoice.direction, func.count(Invoice.id), this_year)
            .where(Invoice.account_id.in_(self._assignor_ids(premium_id)))
            .group_by(Invoice.account_id, Invoice.direction)
        )
        found: dict[int, dict[str, int]] = {}
        for account_id, direction, total, current in self.session.execute(query):
            figures = found.setdefault(account_id, {})
            figures[f"{direction}_total"], figures[f"{direction}_year"] = int(total), int(current or 0)
        return {
            account_id: InvoiceCounts(
                sent_total=f.get("out_total", 0),
                sent_this_year=f.get("out_year", 0),
                received_total=f.get("in_total", 0),
                received_this_year=f.get("in_year", 0),
            )
            for account_id, f in found.items()
        }

    def notification_counts(self, premium_id: int) -> dict[int, int]:
        query = (
            select(Invoice.account_id, func.count(Notification.id))
            .join(Invoice, Invoice.id == Notification.invoice_id)
            .where(Invoice.account_id.in_(self._assignor_ids(premium_id)))
            .group_by(Invoice.account_id)
        )
        return {row[0]: int(row[1]) for row in self.session.execute(query)}

    # Reports ----------------------------------------------------------------------------------------

    def lock_account(self, account_id: int) -> None:
        """Serialise report requests of one Premium user (two first calls must start one job)."""
        self.session.get(Account, account_id, with_for_update=True)

    def latest_report(self, account_id: int) -> MultisellerReport | None:
        query = (
            select(MultisellerReport)
            .where(MultisellerReport.account_id == account_id)
            .order_by(MultisellerReport.id.desc())
            .limit(1)
        )
        return self.session.scalar(query)

    def report(self, report_id: int, *, for_update: bool = False) -> MultisellerReport | None:
        return self.session.get(MultisellerReport, report_id, with_for_update=for_update or None)

    def add_report(self, report: MultisellerReport) -> MultisellerReport:
        self.session.add(report)
        self.session.flush()
        return report

    def job_status(self, job_id: int | None) -> str | None:
        return self.session.scalar(select(JobRow.status).where(JobRow.id == job_id)) if job_id else None
