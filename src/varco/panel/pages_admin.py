"""Operator pages: accounts and tiers, annual locks, SDI simulator scenarios, the e-mail outbox, the
audit trail."""

from __future__ import annotations

from urllib.parse import quote_plus

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response
from sqlalchemy import select

from varco.accounts import service as accounts
from varco.audit import service as audit
from varco.audit.schemas import AuditEventOut
from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.core.errors import VarcoError
from varco.core.numbers import whole_number
from varco.limits import annual
from varco.limits.models import AnnualLock
from varco.mail import service as mail
from varco.mail.models import MailMessage
from varco.panel.web import PanelAdmin, check_csrf, page, redirect
from varco.sdi.simulator import control, scenarios

router = APIRouter(prefix="/panel/admin", include_in_schema=False)


@router.get("")
def admin_page(request: Request, current: PanelAdmin, session: SessionDep, settings: SettingsDep) -> Response:
    locks = session.scalars(
        select(AnnualLock).where(AnnualLock.unlocked_at.is_(None)).order_by(AnnualLock.id.desc()).limit(100)
    ).all()
    outbox = session.scalars(select(MailMessage).order_by(MailMessage.id.desc()).limit(50)).all()
    names = {a.id: a.username for a in accounts.list_accounts(session)}
    return page(
        request,
        "admin.html",
        current,
        accounts=accounts.list_accounts(session),
        tiers=sorted(settings.tiers),
        locks=locks,
        names=names,
        rules=scenarios.list_rules(session),
        outbox=outbox,
        attachments=mail.attachment_names(session, [m.id for m in outbox]),
        error=request.query_params.get("error"),
        outcomes=("RC", "NS", "MC", "AT"),
    )


def _back(error: VarcoError | None = None) -> Response:
    return redirect("/panel/admin" + (f"?error={quote_plus(str(error)[:300])}" if error else ""))


@router.post("/tier")
def set_tier(
    request: Request,
    current: PanelAdmin,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
    username: str = Form(""),
    tier: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    try:
        level = whole_number(tier, "tier")
        target = accounts.get_by_username(session, username)
        annual.set_tier(session, target, level, settings, clock, audit.actor_of(request, current.account))
    except VarcoError as exc:
        return _back(exc)
    return _back()


@router.post("/unlock")
def unlock(
    request: Request,
    current: PanelAdmin,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
    username: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    try:
        target = accounts.get_by_username(session, username)
        annual.unlock(session, target, audit.actor_of(request, current.account), clock)
    except VarcoError as exc:
        return _back(exc)
    return _back()


@router.post("/scenario")
def set_scenario(
    request: Request,
    current: PanelAdmin,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
    recipient_code: str = Form(""),
    filename: str = Form(""),
    default: str = Form(""),
    outcome: str = Form(""),
    esito_outcome: str = Form(""),
    delay: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    try:
        rule = control.set_scenario(
            session,
            clock,
            recipient_code=recipient_code or None,
            filename=filename or None,
            default=default == "yes",
            outcome=outcome or None,
            esito_outcome=esito_outcome or None,
            delay=delay or None,
        )
    except VarcoError as exc:
        return _back(exc)
    actor = audit.actor_of(request, current.account)
    audit.record(session, audit.Kind.SDI_SCENARIO_SET, actor, clock, details=control.rule_details(rule))
    return _back()


@router.get("/audit")
def audit_page(request: Request, current: PanelAdmin, session: SessionDep, settings: SettingsDep) -> Response:
    """The audit trail, with the filters and pages of GET /api/v2/admin/audit."""
    query = request.query_params
    form = {name: query.get(name, "") for name in ("kind", "username", "ip", "from", "to")}
    try:
        where = audit.filters(
            kind=form["kind"], username=form["username"], ip=form["ip"], start=form["from"], end=form["to"]
        )
        number, size = audit.paging(query.get("page"), query.get("size"), settings)
        found = audit.listing(session, where, number, size)
    except VarcoError as exc:
        return page(request, "audit.html", current, status=400, form=form, found=None, error=str(exc))
    return page(
        request,
        "audit.html",
        current,
        form=form,
        found=found,
        events=[AuditEventOut.of(e) for e in found.events],
        pages=max(1, -(-found.total // found.size)),
        error=None,
    )
