"""Token authentication (§2.1, §3.4, §5): sign-in, refresh, bearer check, revocation."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import bindparam, select

from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.audit import service as audit
from varco.auth.models import AuthToken
from varco.core.clock import Clock
from varco.core.errors import InvalidGrant, Unauthorized
from varco.core.security import new_token, token_digest, verify_password
from varco.core.uow import UnitOfWork
from varco.settings import Settings


@dataclass(frozen=True)
class IssuedToken:
    access_token: str
    refresh_token: str
    record: AuthToken
    username: str


def _issue(
    session: UnitOfWork, account: Account, client_id: str, clock: Clock, settings: Settings
) -> IssuedToken:
    now = clock.now()
    access, refresh = new_token(), new_token()
    record = AuthToken(
        account_id=account.id,
        access_digest=token_digest(access),
        refresh_digest=token_digest(refresh),
        client_id=client_id,
        issued_at=now,
        expires_at=now + settings.access_token_ttl,
        refresh_expires_at=now + settings.refresh_token_ttl,
    )
    session.add(record)
    session.flush()
    return IssuedToken(access, refresh, record, account.username)


class WrongCredentials(InvalidGrant):
    """The user name or password is incorrect (the answer never says which)."""

    def __init__(self, message: str, *, unknown_user: bool) -> None:
        super().__init__(message)
        self.unknown_user = unknown_user  # for the audit trail only (audit.record_refused)


def verify_credentials(session: UnitOfWork, username: str, password: str) -> Account:
    """The account whose password this is, or WrongCredentials (every password check goes here)."""
    account = accounts.find(session, username)
    # verify_password runs even for unknown users so the answer time reveals nothing.
    if not verify_password(account.password_hash if account else None, password) or account is None:
        raise WrongCredentials("The user name or password is incorrect.", unknown_user=account is None)
    return account


def names_an_account(refused: Exception) -> bool:
    """Did the refused sign-in type the name of an account? (The audit trail keeps only such names.)"""
    return not (isinstance(refused, WrongCredentials) and refused.unknown_user)


class AccountRefused(InvalidGrant):
    """The password is right but the account may not use the service now (§1 Access)."""


def sign_in(
    session: UnitOfWork,
    username: str,
    password: str,
    client_id: str,
    clock: Clock,
    settings: Settings,
    actor: audit.Actor,
) -> IssuedToken:
    """grant_type=password. A refusal raises (WrongCredentials, AccountRefused): the caller audits it
    with `refusal_code`, in a transaction of its own."""
    account = verify_credentials(session, username, password)
    reason = accounts.refusal_reason(session, account, clock)
    if reason:
        raise AccountRefused(reason)
    issued = _issue(session, account, client_id, clock, settings)
    actor, details = actor.signed_in(account), {"channel": "api", "grantId": issued.record.id}
    audit.record(session, audit.Kind.SIGNIN_SUCCEEDED, actor, clock, subject=account, details=details)
    return issued


def refusal_code(refused: Exception) -> str:
    """Why a password check was refused, as the audit trail says it (never the password)."""
    return "wrong_credentials" if isinstance(refused, WrongCredentials) else "account_refused"


def audit_refusal(
    session: UnitOfWork, refused: Exception, username: str, actor: audit.Actor, clock: Clock, channel: str
) -> None:
    """The audit event of a refused sign-in (`channel`: api, v1, panel), committed in a transaction
    of its own (audit.record_refused): why, and the name typed only if it is an account's."""
    audit.record_refused(
        session,
        audit.Kind.SIGNIN_FAILED,
        actor,
        clock,
        subject_username=username,
        subject_known=names_an_account(refused),
        details={"channel": channel, "reason": refusal_code(refused)},
    )


def refresh(
    session: UnitOfWork,
    refresh_token: str,
    client_id: str,
    clock: Clock,
    settings: Settings,
    actor: audit.Actor,
) -> IssuedToken:
    """grant_type=refresh_token: a new pair; the old refresh token is used up."""
    now = clock.now()
    record = session.scalar(
        select(AuthToken).where(AuthToken.refresh_digest == token_digest(refresh_token)).with_for_update()
    )
    if record is None or record.revoked_at is not None:
        raise InvalidGrant("The refresh token is invalid.")
    if record.refreshed_at is not None:
        raise InvalidGrant("The refresh token has already been used.")
    if now >= record.refresh_expires_at:
        raise InvalidGrant("The refresh token has expired.")
    account = accounts.get(session, record.account_id)
    assert account is not None
    reason = accounts.refusal_reason(session, account, clock)
    if reason:
        raise InvalidGrant(reason)
    record.refreshed_at = now
    issued = _issue(session, account, client_id or record.client_id, clock, settings)
    actor, details = actor.signed_in(account), {"from": record.id, "to": issued.record.id}  # grant ids
    audit.record(session, audit.Kind.TOKEN_REFRESHED, actor, clock, subject=account, details=details)
    return issued


# One statement, built once: the token's validity and its account (a bearer check runs on every call).
_BEARER = (
    select(AuthToken.revoked_at, AuthToken.expires_at, Account)
    .join(Account, Account.id == AuthToken.account_id)
    .where(AuthToken.access_digest == bindparam("digest"))
)


def authenticate(session: UnitOfWork, access_token: str, clock: Clock) -> Account:
    """The account behind a bearer token, or Unauthorized (§5.4)."""
    row = session.execute(_BEARER, {"digest": token_digest(access_token)}).first()
    if row is None or row.revoked_at is not None or clock.now() >= row.expires_at:
        raise Unauthorized()
    account = row.Account
    if accounts.refusal_reason(session, account, clock):
        raise Unauthorized()
    return account


def check_credentials(session: UnitOfWork, username: str, password: str, clock: Clock) -> Account:
    """Version-1 calls carry username and password in the body (§9): the sign-in checks, no token."""
    account = verify_credentials(session, username, password)
    reason = accounts.refusal_reason(session, account, clock)
    if reason:
        raise AccountRefused(reason)
    return account


def revoke_all(session: UnitOfWork, account: Account, clock: Clock, actor: audit.Actor = audit.SYSTEM) -> int:
    """Revoke every token of an account (disable, password change)."""
    tokens = session.scalars(
        select(AuthToken).where(AuthToken.account_id == account.id, AuthToken.revoked_at.is_(None))
    ).all()
    for token in tokens:
        token.revoked_at = clock.now()
    if tokens:
        details = {"count": len(tokens)}
        audit.record(session, audit.Kind.TOKENS_REVOKED, actor, clock, subject=account, details=details)
    return len(tokens)


def revoke_token(
    session: UnitOfWork, account: Account, token_id: int, clock: Clock, actor: audit.Actor
) -> bool:
    """Revoke one of the account's tokens (both its access and refresh token); False when the id
    is not the account's or the token is already revoked."""
    token = session.scalar(
        select(AuthToken).where(AuthToken.id == token_id, AuthToken.account_id == account.id)
    )
    if token is None or token.revoked_at is not None:
        return False
    token.revoked_at = clock.now()
    details = {"grantId": token.id}  # the id, never the token
    audit.record(session, audit.Kind.TOKEN_REVOKED, actor, clock, subject=account, details=details)
    return True
