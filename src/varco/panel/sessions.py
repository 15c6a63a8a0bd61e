"""Panel sign-in: browser sessions (random token in a signed cookie, digest stored), CSRF, registration."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy import select

from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.audit import service as audit
from varco.auth import service as auth
from varco.core.clock import Clock
from varco.core.errors import BadRequest
from varco.core.security import hash_password, new_token, token_digest, verify_password
from varco.core.uow import UnitOfWork
from varco.panel.models import PanelRegistration, PanelSession
from varco.settings import Settings

COOKIE = "varco_panel"
MIN_PASSWORD = 10  # contract silent: docs/panel.md


class SignInRefused(BadRequest):
    """Wrong username or password, or the account may not sign in."""


class RegistrationInvalid(BadRequest):
    """Registration data rejected."""


@dataclass(frozen=True)
class Current:
    account: Account
    session: PanelSession


def _serializer(settings: Settings) -> URLSafeSerializer:
    return URLSafeSerializer(settings.secret_key.get_secret_value(), salt="varco.panel.session")


def sign_in(
    session: UnitOfWork,
    username: str,
    password: str,
    user_agent: str,
    settings: Settings,
    clock: Clock,
    actor: audit.Actor,
) -> str:
    """Check the password like the API does and open a browser session; returns the signed cookie value."""
    account = auth.verify_credentials(session, username, password)  # WrongCredentials: counted
    if not may_use_panel(account, clock):
        raise SignInRefused()
    token, now = new_token(), clock.now()
    row = PanelSession(
        account_id=account.id,
        token_digest=token_digest(token),
        csrf_token=secrets.token_urlsafe(32),
        user_agent=user_agent[:255],
        created_at=now,
        expires_at=now + settings.panel_session_ttl,
    )
    session.add(row)
    session.flush()
    actor, details = actor.signed_in(account), {"channel": "panel", "panelSessionId": row.id}
    audit.record(session, audit.Kind.SIGNIN_SUCCEEDED, actor, clock, subject=account, details=details)
    return _serializer(settings).dumps(token)


def current(session: UnitOfWork, cookie: str | None, settings: Settings, clock: Clock) -> Current | None:
    """The signed-in account behind a cookie, or None (bad signature, expired, revoked, refused)."""
    if not cookie:
        return None
    try:
        token = _serializer(settings).loads(cookie)
    except BadSignature:
        return None
    row = session.scalar(select(PanelSession).where(PanelSession.token_digest == token_digest(str(token))))
    if row is None or row.revoked_at is not None or clock.now() >= row.expires_at:
        return None
    account = accounts.get(session, row.account_id)
    if account is None or not may_use_panel(account, clock):
        return None
    return Current(account, row)


def may_use_panel(account: Account, clock: Clock) -> bool:
    """Disabled or expired accounts are refused; a basic user without a mandate is not (§1: it requests
    one in the panel), though the API refuses it until the mandate is ACTIVE."""
    return not account.is_disabled and not accounts.is_expired(account, clock)


def sign_out(session: UnitOfWork, panel_session: PanelSession, clock: Clock) -> None:
    """Revoke this browser session."""
    row = session.get(PanelSession, panel_session.id)
    if row is not None and row.revoked_at is None:
        row.revoked_at = clock.now()


def sessions_of(session: UnitOfWork, account: Account) -> list[PanelSession]:
    """Browser sessions of an account, newest first."""
    query = select(PanelSession).where(PanelSession.account_id == account.id).order_by(PanelSession.id.desc())
    return list(session.scalars(query.limit(50)))


def revoke_session(
    session: UnitOfWork, account: Account, session_id: int, clock: Clock, actor: audit.Actor
) -> None:
    """Revoke one of the account's own browser sessions."""
    row = session.get(PanelSession, session_id)
    if row is None or row.account_id != account.id:
        raise BadRequest(f"no session {session_id} of yours")
    if row.revoked_at is None:
        row.revoked_at = clock.now()
        ended = {"panelSessionId": row.id}
        audit.record(session, audit.Kind.PANEL_SESSION_REVOKED, actor, clock, subject=account, details=ended)


def is_registered(session: UnitOfWork, account: Account) -> bool:
    return session.get(PanelRegistration, account.id) is not None


def complete_registration(
    session: UnitOfWork,
    account: Account,
    *,
    accepted: bool,
    email: str,
    password: str,
    repeated: str,
    clock: Clock,
    actor: audit.Actor,
) -> PanelRegistration:
    """§1 first sign-in: accept the terms, set the reference e-mail/PEC, choose the password. API
    tokens are revoked only when the password really changes (typing the current one again keeps
    them: nothing that knew the old password is shut out)."""
    if not accepted:
        raise RegistrationInvalid("You must accept the terms of service")
    if not accounts.EMAIL_RE.match(email.strip()):
        raise RegistrationInvalid("Invalid e-mail address")
    if password != repeated:
        raise RegistrationInvalid("The two passwords differ")
    now = clock.now()
    target = accounts.get(session, account.id)
    assert target is not None
    new_password = not verify_password(target.password_hash, password)
    if new_password and len(password) < MIN_PASSWORD:  # the current one is kept whatever its length
        raise RegistrationInvalid("The new password must have at least 10 characters")
    target.pec = email.strip()
    if new_password:
        target.password_hash = hash_password(password)
        changed = {"channel": "panel"}  # never the password, old or new
        audit.record(session, audit.Kind.PASSWORD_CHANGED, actor, clock, subject=target, details=changed)
        auth.revoke_all(session, target, clock, actor)  # API tokens issued with the old password stop working
    return _registered(session, target, email.strip(), now)


def register_seeded(session: UnitOfWork, account: Account, clock: Clock) -> None:
    """A demo account is ready in the panel: its registration is recorded when it is seeded, with
    its PEC as reference e-mail and its password unchanged (docs/panel.md)."""
    if not is_registered(session, account):
        _registered(session, account, account.pec or "", clock.now())


def _registered(session: UnitOfWork, account: Account, email: str, now: datetime) -> PanelRegistration:
    registration = PanelRegistration(
        account_id=account.id, reference_email=email, terms_accepted_at=now, completed_at=now
    )
    session.add(registration)
    session.flush()
    return registration
