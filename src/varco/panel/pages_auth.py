"""Sign-in, sign-out, registration completion, language choice, and the vendored static files."""

from __future__ import annotations

import secrets
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import APIRouter, Form, Request
from fastapi.responses import FileResponse, Response
from starlette.exceptions import HTTPException

from varco.audit import service as audit
from varco.auth import service as auth
from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.limits import credentials
from varco.limits.errors import LimitError
from varco.panel import sessions
from varco.panel.i18n import LANGUAGES
from varco.panel.web import (
    LANG_COOKIE,
    LOGIN_CSRF_COOKIE,
    PanelUser,
    check_csrf,
    check_login_csrf,
    page,
    redirect,
)

router = APIRouter(prefix="/panel", include_in_schema=False)
STATIC = Path(__file__).parent / "static"
STATIC_FILES = {"htmx.min.js": "text/javascript", "panel.css": "text/css", "panel.js": "text/javascript"}


def _safe_next(target: str) -> str:
    return target if target.startswith("/panel/") and not target.startswith("//") else "/panel/invoices/out"


@router.get("/static/{name}")
def static(name: str) -> Response:
    if name not in STATIC_FILES:
        raise HTTPException(404, "no such file")
    return FileResponse(
        STATIC / name, media_type=STATIC_FILES[name], headers={"Cache-Control": "max-age=3600"}
    )


@router.get("")
def home() -> Response:
    return redirect("/panel/invoices/out")


@router.get("/login")
def login_form(request: Request, next: str = "/panel/invoices/out") -> Response:
    token = secrets.token_urlsafe(24)
    response = page(request, "login.html", csrf_login=token, next=_safe_next(next), error=None)
    response.set_cookie(LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict", path="/panel")
    return response


@router.post("/login")
def login(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
    username: str = Form(""),
    password: str = Form(""),
    csrf_token: str = Form(""),
    next: str = Form("/panel/invoices/out"),
) -> Response:
    check_login_csrf(request, csrf_token)
    actor, name = audit.actor_of(request), username.strip()
    try:
        credentials.refuse_if_guessing(request, name, clock)
        try:
            cookie = sessions.sign_in(
                session, name, password, request.headers.get("user-agent", ""), settings, clock, actor
            )
        except (auth.WrongCredentials, sessions.SignInRefused) as refused:
            if isinstance(refused, auth.WrongCredentials):
                credentials.count_failure(request, name, clock)
            auth.audit_refusal(session, refused, name, actor, clock, "panel")
            raise sessions.SignInRefused() from None
    except (sessions.SignInRefused, LimitError) as refused:
        if isinstance(refused, LimitError):
            return page(
                request,
                "login.html",
                status=429,
                csrf_login=csrf_token,
                next=_safe_next(next),
                error=str(refused),
                username=username,
            )
        response = page(
            request,
            "login.html",
            status=400,
            csrf_login=csrf_token,
            next=_safe_next(next),
            error="Wrong username or password, or the account may not sign in",
            username=username,
        )
        return response
    response = redirect(_safe_next(next))
    response.set_cookie(
        sessions.COOKIE,
        cookie,
        max_age=int(settings.panel_session_ttl.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=settings.profile == "production",
        path="/panel",
    )
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/panel")
    return response


@router.post("/logout")
def logout(current: PanelUser, session: SessionDep, clock: ClockDep, csrf_token: str = Form("")) -> Response:
    check_csrf(current, csrf_token)
    sessions.sign_out(session, current.session, clock)
    response = redirect("/panel/login")
    response.delete_cookie(sessions.COOKIE, path="/panel")
    return response


def same_site_panel_path(referer: str | None) -> str:
    """Back to the panel page the language was chosen on: the Referer's path only (never another
    origin: an open redirect), and only a panel page."""
    parts = urlsplit(referer or "")
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    if not parts.path.startswith("/panel/") or any(c in path for c in "\\\r\n\t"):
        return "/panel/invoices/out"
    return path


@router.get("/lang/{code}")
def choose_language(code: str, request: Request) -> Response:
    response = redirect(same_site_panel_path(request.headers.get("referer")))
    if code in LANGUAGES:
        response.set_cookie(LANG_COOKIE, code, max_age=365 * 86400, samesite="lax", path="/panel")
    return response


@router.get("/register")
def register_form(request: Request, current: PanelUser) -> Response:
    return page(request, "register.html", current, error=None, email=current.account.pec or "")


@router.post("/register")
def register(
    request: Request,
    current: PanelUser,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
    accept: str = Form(""),
    email: str = Form(""),
    password: str = Form(""),
    repeated: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    if sessions.is_registered(session, current.account):  # a second post (back button, double click)
        return redirect("/panel/invoices/out")
    try:
        sessions.complete_registration(
            session,
            current.account,
            accepted=accept == "yes",
            email=email,
            password=password,
            repeated=repeated,
            clock=clock,
            actor=audit.actor_of(request, current.account),
        )
    except sessions.RegistrationInvalid as exc:
        return page(request, "register.html", current, status=400, error=str(exc), email=email)
    return redirect("/panel/invoices/out")
