"""Operator pages: accounts and tiers, annual locks, SDI simulator scenarios, the e-mail outbox."""

from __future__ import annotations

from urllib.parse import quote_plus

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response
from sqlalchemy import select

from varco.accounts import service as accounts
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
        annual.set_tier(session, accounts.get_by_username(session, username), level, settings, clock)
    except VarcoError as exc:
        return _back(exc)
    return _back()


@router.post("/unlock")
def unlock(
    current: PanelAdmin,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
    username: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    try:
        annual.unlock(session, accounts.get_by_username(session, username), current.account.username, clock)
    except VarcoError as exc:
        return _back(exc)
    return _back()


@router.post("/scenario")
def set_scenario(
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
        control.set_scenario(
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
    return _back()
