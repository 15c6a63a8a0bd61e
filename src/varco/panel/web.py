"""Panel plumbing: templates, language, the signed-in user dependency, CSRF checks, redirects."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.exceptions import HTTPException

from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.core.errors import BadRequest
from varco.panel import formats, sessions
from varco.panel.i18n import LANGUAGES, pick_language, translator

TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
TEMPLATES.filters["outcome"] = formats.outcome
LANG_COOKIE = "varco_lang"
LOGIN_CSRF_COOKIE = "varco_login_csrf"


class CsrfRefused(BadRequest):
    """The form's CSRF token is missing or wrong: reload the page and try again."""


def language(request: Request) -> str:
    return pick_language(request.cookies.get(LANG_COOKIE), request.headers.get("accept-language"))


def page(
    request: Request,
    template: str,
    current: sessions.Current | None = None,
    status: int = 200,
    **context: Any,
) -> HTMLResponse:
    """Render a full page (or, for an htmx request, the template's `content` block is enough)."""
    lang = language(request)
    html = TEMPLATES.get_template(template).render(
        request=request,
        t=translator(lang),
        lang=lang,
        languages=LANGUAGES,
        amount=lambda value: formats.amount(value, lang),
        user=current.account if current else None,
        csrf=current.session.csrf_token if current else "",
        **context,
    )
    return HTMLResponse(html, status_code=status)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)  # POST-redirect-GET


def _login_redirect(request: Request) -> HTTPException:
    # The one error handler keeps our headers: a 303 with Location is followed by every browser.
    # Percent-encoded again: a header holds Latin-1 only, and the path is the client's.
    target = quote(request.url.path, safe="/")
    return HTTPException(303, "sign in first", headers={"Location": f"/panel/login?next={target}"})


def signed_in(
    request: Request, session: SessionDep, settings: SettingsDep, clock: ClockDep
) -> sessions.Current:
    """The signed-in panel user; redirects to sign-in, or to registration until it is completed."""
    found = sessions.current(session, request.cookies.get(sessions.COOKIE), settings, clock)
    if found is None:
        raise _login_redirect(request)
    if not request.url.path.startswith("/panel/register") and not sessions.is_registered(
        session, found.account
    ):
        raise HTTPException(303, "complete your registration", headers={"Location": "/panel/register"})
    return found


PanelUser = Annotated[sessions.Current, Depends(signed_in)]


def admin(current: PanelUser) -> sessions.Current:
    if not current.account.is_admin:
        raise HTTPException(403, "Operators only")
    return current


PanelAdmin = Annotated[sessions.Current, Depends(admin)]


def check_csrf(current: sessions.Current, token: str) -> None:
    """Every state-changing form posts the session's token back (synchronizer token pattern)."""
    if not token or not secrets.compare_digest(token, current.session.csrf_token):
        raise CsrfRefused()


def check_login_csrf(request: Request, token: str) -> None:
    """Before sign-in there is no session: the login form uses a double-submit cookie."""
    cookie = request.cookies.get(LOGIN_CSRF_COOKIE, "")
    if not token or not cookie or not secrets.compare_digest(token, cookie):
        raise CsrfRefused()
