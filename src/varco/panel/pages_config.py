"""Configuration pages: e-mail receipt, delegations (mandates), usage and storage, sessions and tokens."""

from __future__ import annotations

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response
from sqlalchemy import select

from varco.accounts import delegations
from varco.accounts import service as accounts
from varco.accounts.models import DelegationStatus
from varco.audit import service as audit
from varco.auth import service as auth
from varco.auth.models import AuthToken
from varco.core import numbers  # noqa: F401 - registers the {name:id} path convertor
from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.core.errors import BadRequest, NotFound, VarcoError
from varco.limits import annual
from varco.mail import receipts
from varco.panel import sessions
from varco.panel.web import PanelUser, check_csrf, page, redirect

router = APIRouter(prefix="/panel", include_in_schema=False)

# Which status each panel button asks for, and who may press it (the Premium delegate decides; the
# delegator may withdraw its own request or mandate).
ACTIONS = {
    "approve": (DelegationStatus.ACTIVE, "delegate"),
    "suspend": (DelegationStatus.SUSPEND, "delegate"),
    "resume": (DelegationStatus.ACTIVE, "delegate"),
    "revoke": (DelegationStatus.INACTIVE, "either"),
}


@router.get("/settings")
def settings_page(request: Request, current: PanelUser, session: SessionDep) -> Response:
    setting = receipts.setting_of(session, current.account)
    return page(
        request,
        "settings.html",
        current,
        setting=setting,
        error=None,
        saved=request.query_params.get("saved"),
        receipts=receipts.receipts_of(session, current.account),
    )


@router.post("/settings")
def save_settings(
    request: Request,
    current: PanelUser,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
    enabled: str = Form(""),
    address: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    try:
        receipts.configure(session, current.account, enabled=enabled == "yes", address=address, clock=clock)
    except receipts.ReceiptSettingInvalid as exc:
        return page(
            request,
            "settings.html",
            current,
            status=400,
            setting=None,
            error=str(exc),
            saved=None,
            receipts=[],
            address=address,
        )
    return redirect("/panel/settings?saved=1")


@router.post("/settings/sdi-controls")
def save_sdi_controls(
    current: PanelUser, session: SessionDep, csrf_token: str = Form(""), enabled: str = Form("")
) -> Response:
    """preflightSdiControls (docs/sdi-controls.md), as PUT /api/v2/account/settings sets it."""
    check_csrf(current, csrf_token)
    accounts.set_preflight_sdi_controls(session, current.account.id, enabled == "yes")
    return redirect("/panel/settings?saved=1")


@router.get("/delegations")
def delegations_page(request: Request, current: PanelUser, session: SessionDep) -> Response:
    rows = delegations.listing(session, current.account)
    given = [r for r in rows if r[0].delegator_id == current.account.id]
    received = [r for r in rows if r[0].delegate_id == current.account.id]
    return page(
        request,
        "delegations.html",
        current,
        given=given,
        received=received,
        error=request.query_params.get("error"),
    )


@router.post("/delegations")
def request_mandate(
    request: Request,
    current: PanelUser,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
    premium: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    try:
        delegate = accounts.find(session, premium.strip())
        if delegate is None:
            raise BadRequest(f"no Premium user named {premium.strip()!r}")
        delegations.create(
            session,
            current.account,
            delegate,
            DelegationStatus.PENDING,
            clock,
            actor=audit.actor_of(request, current.account),
        )
    except VarcoError as exc:
        return redirect(f"/panel/delegations?error={_q(str(exc))}")
    return redirect("/panel/delegations")


@router.post("/delegations/{delegation_id:id}/{action}")
def change_mandate(
    request: Request,
    delegation_id: int,
    action: str,
    current: PanelUser,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    try:
        if action not in ACTIONS:
            raise BadRequest(f"unknown action {action!r}")
        status, who = ACTIONS[action]
        mine = {d.id: d for d, _, _ in delegations.listing(session, current.account)}
        delegation = mine.get(delegation_id)
        if delegation is None:
            raise BadRequest(f"no delegation {delegation_id} of yours")
        if who == "delegate" and delegation.delegate_id != current.account.id:
            raise BadRequest("only the Premium user who was asked can approve, suspend or resume a mandate")
        actor = audit.actor_of(request, current.account)
        delegations.set_status(session, delegation_id, status, clock, actor=actor)
    except VarcoError as exc:
        return redirect(f"/panel/delegations?error={_q(str(exc))}")
    return redirect("/panel/delegations")


@router.get("/usage")
def usage_page(
    request: Request, current: PanelUser, session: SessionDep, settings: SettingsDep, clock: ClockDep
) -> Response:
    payer = accounts.paying_account(session, current.account)
    year = clock.now().year
    return page(
        request,
        "usage.html",
        current,
        payer=payer,
        year=year,
        used=annual.used_transmissions(session, payer.id, year),
        limit=annual.annual_limit(settings, payer.tier),
        hourly=settings.tier_limits(payer.tier)[0],
        locked=annual.active_lock(session, payer.id, year),
        used_kb=accounts.used_space_kb(session, current.account),
    )


@router.get("/tokens")
def tokens_page(request: Request, current: PanelUser, session: SessionDep, clock: ClockDep) -> Response:
    # Read-only listing of the account's API tokens (digests never shown); auth has no listing service.
    tokens = session.scalars(
        select(AuthToken)
        .where(AuthToken.account_id == current.account.id)
        .order_by(AuthToken.id.desc())
        .limit(50)
    ).all()
    return page(
        request,
        "tokens.html",
        current,
        tokens=tokens,
        browser_sessions=sessions.sessions_of(session, current.account),
        now=clock.now(),
        current_id=current.session.id,
    )


@router.post("/tokens/revoke")
def revoke_tokens(
    request: Request, current: PanelUser, session: SessionDep, clock: ClockDep, csrf_token: str = Form("")
) -> Response:
    check_csrf(current, csrf_token)
    auth.revoke_all(session, current.account, clock, audit.actor_of(request, current.account))
    return redirect("/panel/tokens")


@router.post("/tokens/{token_id:id}/revoke")
def revoke_token(
    request: Request,
    token_id: int,
    current: PanelUser,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    actor = audit.actor_of(request, current.account)
    if not auth.revoke_token(session, current.account, token_id, clock, actor):
        raise NotFound(f"no active API token {token_id} of yours")
    return redirect("/panel/tokens")


@router.post("/sessions/{session_id:id}/revoke")
def revoke_browser_session(
    request: Request,
    session_id: int,
    current: PanelUser,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    actor = audit.actor_of(request, current.account)
    sessions.revoke_session(session, current.account, session_id, clock, actor)
    return redirect("/panel/tokens")


def _q(text: str) -> str:
    from urllib.parse import quote_plus

    return quote_plus(text[:300])
