"""GET /api/v2/admin/audit: the audit trail, for operators."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from varco.audit import service
from varco.audit.schemas import AuditEventOut, AuditPage
from varco.auth.dependencies import Admin
from varco.core.deps import SessionDep, SettingsDep

router = APIRouter(prefix="/api/v2/admin/audit", tags=["admin: audit"])
Q = Annotated[str | None, Query()]

AUDIT_DOC = """
Security and administrative events (sign-ins, tokens, passwords, accounts, tiers and locks,
delegations, callback endpoints, the SDI simulator's controls), newest first, with paging and
filters. Operators only (403 `0012` otherwise). Never a password, token, secret or credential.
The kinds and their details are listed in docs/operations.md, "Audit trail".
"""


@router.get("", response_model=AuditPage, summary="The audit trail (operators)", description=AUDIT_DOC)
def audit_trail(
    admin: Admin,
    session: SessionDep,
    settings: SettingsDep,
    kind: Q = None,
    username: Q = None,
    ip: Q = None,
    start: Annotated[str | None, Query(alias="from")] = None,
    end: Annotated[str | None, Query(alias="to")] = None,
    page: Q = None,
    size: Q = None,
) -> AuditPage:
    where = service.filters(kind=kind, username=username, ip=ip, start=start, end=end)
    number, per_page = service.paging(page, size, settings)
    found = service.listing(session, where, number, per_page)
    pages = -(-found.total // found.size)
    return AuditPage(
        content=[AuditEventOut.of(e) for e in found.events],
        first=found.page == 1,
        last=found.page >= pages,
        number=found.page,
        numberOfElements=len(found.events),
        size=found.size,
        totalElements=found.total,
        totalPages=pages,
    )
