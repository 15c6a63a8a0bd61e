"""Multiseller decisions: who may ask, page rules, detail, and the report's life (§4.1, §2.4–2.6)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from varco.accounts.models import Account, Delegation, DelegationStatus
from varco.accounts.multisellers import paging
from varco.accounts.multisellers.models import MultisellerReport, ReportStatus
from varco.accounts.multisellers.repository import Filters, InvoiceCounts, MultisellerRepository
from varco.accounts.multisellers.schemas import (
    ROME,
    Multiseller,
    MultisellerPage,
    MultisellerReportBody,
    ReportEntry,
    ReportRun,
    YearAndTotal,
    contract_datetime,
    kilobytes,
)
from varco.accounts.repository import AccountRepository
from varco.core import jobs
from varco.core.blobs import used_bytes
from varco.core.clock import Clock
from varco.core.errors import BadRequest, Forbidden, NotFound
from varco.core.numbers import whole_number
from varco.core.uow import UnitOfWork
from varco.settings import Settings

REPORT = jobs.Task("multiseller_report", ("report_id",))  # run by accounts.multisellers.tasks


class PremiumOnly(Forbidden):
    """Multiseller functions are for Premium users."""


def require_premium(caller: Account) -> None:
    """§1, §4.1: the multiseller list, detail and report belong to Premium users."""
    if not caller.is_premium:
        raise PremiumOnly(
            f"{caller.username} is a basic user: multiseller functions (assignor list, detail and report) "
            "are for Premium users only"
        )


def _blank(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None


def filters(country_code: str | None, vat_code: str | None, status: str | None) -> Filters:
    """Optional list filters; empty strings mean absent, anything else must be well formed."""
    country, vat, state = _blank(country_code), _blank(vat_code), _blank(status)
    if country is not None and not re.fullmatch(r"[A-Za-z]{2}", country):
        raise BadRequest(f"countryCode must be two letters (e.g. IT): got {country_code!r}")
    if vat is not None and not re.fullmatch(r"[0-9A-Za-z]{1,28}", vat):
        raise BadRequest(f"vatCode must be 1-28 letters or digits, without spaces: got {vat_code!r}")
    if state is not None and state.upper() not in DelegationStatus.__members__:
        choices = ", ".join(s.value for s in DelegationStatus)
        raise BadRequest(f"status must be one of {choices}: got {status!r}")
    return Filters(
        country_code=country.upper() if country else None,
        vat_code=vat,
        status=state.upper() if state else None,
    )


def _multiseller(delegation: Delegation, assignor: Account, used: int) -> Multiseller:
    return Multiseller(
        id=str(delegation.id),
        description=assignor.description,
        countryCode=assignor.country_code,
        vatCode=assignor.vat_code,
        creationDate=contract_datetime(delegation.created_at),
        status=delegation.status,
        usedSpaceKB=kilobytes(used),
    )


def list_page(
    session: UnitOfWork, caller: Account, wanted: Filters, request: paging.PageRequest
) -> MultisellerPage:
    """One page of the caller's assignors, oldest delegation first."""
    require_premium(caller)
    repo = MultisellerRepository(session)
    pages = paging.total_pages(repo.count(caller.id, wanted), request.size)
    paging.check_in_range(request, pages)
    rows = repo.page(caller.id, wanted, request.offset, request.size)
    used = repo.used_bytes(account_ids=[assignor.id for _, assignor in rows])
    return MultisellerPage(
        content=[_multiseller(d, a, used.get(a.id, 0)) for d, a in rows],
        first=request.page == 1,
        last=pages == 0 or request.page == pages,
        number=request.page,
        numberOfElements=len(rows),
        size=request.size,
        totalElements=None,
        totalPages=pages,
    )


def detail(session: UnitOfWork, caller: Account, multiseller_id: str) -> Multiseller:
    """One assignor of the caller by the delegation's id; anyone else's is not found."""
    require_premium(caller)
    found = MultisellerRepository(session).one(caller.id, whole_number(multiseller_id, "multiseller id"))
    if found is None:
        raise NotFound(f"no multiseller with id {multiseller_id} among your assignors")
    delegation, assignor = found
    return _multiseller(delegation, assignor, used_bytes(session, assignor.id))


@dataclass(frozen=True)
class ReportAnswer:
    content: dict[str, Any] | None  # None: being prepared (202)


def request_report(session: UnitOfWork, caller: Account, settings: Settings, clock: Clock) -> ReportAnswer:
    """Serve the caller's finished report while it is fresh; otherwise start (or wait for) one."""
    require_premium(caller)
    repo = MultisellerRepository(session)
    repo.lock_account(caller.id)  # two first calls at once start one job
    now = clock.now()
    latest = repo.latest_report(caller.id)
    if latest is not None and latest.status == ReportStatus.PREPARING:
        if repo.job_status(latest.job_id) != "failed":
            return ReportAnswer(None)
        latest.status = ReportStatus.FAILED  # the worker gave up: start again below
    if latest is not None and latest.status == ReportStatus.READY:
        assert latest.ready_at is not None
        if now < latest.ready_at + settings.report_ttl:
            return ReportAnswer(latest.content)
    report = repo.add_report(
        MultisellerReport(account_id=caller.id, status=ReportStatus.PREPARING, requested_at=now)
    )
    job = jobs.enqueue(
        session, REPORT, key=f"multiseller-report:{report.id}", clock=clock, report_id=report.id
    )
    report.job_id = job.id
    return ReportAnswer(None)


def _year_start(now: datetime) -> datetime:
    """1 January of the current year, Italian time (the fiscal year of the invoices)."""
    local = now.astimezone(ROME)
    return local.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)


def _entry(
    delegation: Delegation, assignor: Account, premium: Account, counts: InvoiceCounts, notes: int, size: int
) -> ReportEntry:
    return ReportEntry(
        id=str(delegation.id),
        username=assignor.username,
        parentUsername=premium.username,
        description=assignor.description,
        countryCode=assignor.country_code,
        vatCode=assignor.vat_code,
        creationDate=contract_datetime(delegation.created_at),
        status=delegation.status,
        notifications=notes,
        occupiedSpace=kilobytes(size),
        sentInvoices=YearAndTotal(currentYear=counts.sent_this_year, total=counts.sent_total),
        receivedInvoices=YearAndTotal(currentYear=counts.received_this_year, total=counts.received_total),
    )


def build_report(session: UnitOfWork, report_id: int, clock: Clock) -> None:
    """Compute a PREPARING report's §2.6 body and mark it READY (no-op if already done)."""
    repo = MultisellerRepository(session)
    report = repo.report(report_id, for_update=True)
    if report is None or report.status != ReportStatus.PREPARING:
        return
    premium = AccountRepository(session).get(report.account_id)
    assert premium is not None
    now = clock.now()
    counts = repo.invoice_counts(premium.id, _year_start(now))
    notes = repo.notification_counts(premium.id)
    sizes = repo.used_bytes(premium_id=premium.id)
    entries = [
        _entry(d, a, premium, counts.get(a.id, InvoiceCounts()), notes.get(a.id, 0), sizes.get(a.id, 0))
        for d, a in repo.all(premium.id)
    ]
    body = MultisellerReportBody(report=[ReportRun(processingDate=contract_datetime(now), entries=entries)])
    report.content = body.model_dump(mode="json", by_alias=True)
    report.status, report.ready_at = ReportStatus.READY, now
