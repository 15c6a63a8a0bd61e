"""Accounts: creation, listing, disabling, and who may use the service (§1 Access)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from stdnum.it import codicefiscale, iva

from varco.accounts import delegations
from varco.accounts.models import Account, AccountKind, Delegation, DelegationStatus
from varco.accounts.repository import AccountRepository
from varco.audit import service as audit
from varco.core import blobs
from varco.core.clock import Clock
from varco.core.errors import BadRequest, NotFound, VarcoError
from varco.core.security import hash_password
from varco.core.uow import Fact, UnitOfWork
from varco.settings import Settings

USERNAME_RE = re.compile(r"^[A-Za-z0-9._@+-]{1,150}$")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
DEFAULT_VALIDITY = timedelta(days=365)


class AccountInputError(BadRequest):
    """Invalid account data."""


class AccountExists(BadRequest):
    """Username already taken."""


@dataclass(frozen=True)
class NewAccount:
    username: str
    password: str
    kind: AccountKind = AccountKind.PREMIUM
    description: str = ""
    country_code: str = "IT"
    vat_code: str | None = None
    fiscal_code: str | None = None
    pec: str | None = None
    tier: int | None = None
    max_space_kb: int | None = None
    expires_on: date | None = None
    is_admin: bool = False


def _check(account: NewAccount, settings: Settings) -> None:
    if not USERNAME_RE.match(account.username):
        raise AccountInputError(f"invalid username {account.username!r}: use 1-150 letters, digits or ._@+-")
    if not account.password:
        raise AccountInputError("password must not be empty")
    if not re.fullmatch(r"[A-Z]{2}", account.country_code):
        raise AccountInputError(f"invalid country code {account.country_code!r}: two capital letters (IT)")
    if account.vat_code is not None:
        if not re.fullmatch(r"[0-9A-Za-z]{1,28}", account.vat_code):
            raise AccountInputError(
                f"invalid VAT number {account.vat_code!r}: digits only, no country prefix"
            )
        if account.country_code == "IT" and not iva.is_valid(account.vat_code):
            raise AccountInputError(
                f"invalid Italian VAT number {account.vat_code!r}: wrong length or check digit"
            )
    if account.fiscal_code is not None and account.country_code == "IT":
        code = account.fiscal_code.upper()
        if not (codicefiscale.is_valid(code) or iva.is_valid(code)):
            raise AccountInputError(f"invalid Italian tax code {account.fiscal_code!r}")
    if account.pec is not None and not EMAIL_RE.match(account.pec):
        raise AccountInputError(f"invalid e-mail address {account.pec!r}")
    if account.tier is not None and account.tier not in settings.tiers:
        raise AccountInputError(f"invalid tier {account.tier}: choose one of {sorted(settings.tiers)}")
    if account.max_space_kb is not None and account.max_space_kb < 0:
        raise AccountInputError("max space must be zero or more kilobytes")


def create_account(
    session: UnitOfWork, new: NewAccount, settings: Settings, clock: Clock, actor: audit.Actor = audit.SYSTEM
) -> Account:
    """Create an account (Premium unless `kind` says basic)."""
    _check(new, settings)
    repo = AccountRepository(session)
    if repo.by_username(new.username) is not None:
        raise AccountExists(f"username {new.username!r} already exists")
    now = clock.now()
    account = Account(
        username=new.username,
        password_hash=hash_password(new.password),
        kind=new.kind,
        description=new.description or new.username,
        country_code=new.country_code,
        vat_code=new.vat_code,
        fiscal_code=new.fiscal_code.upper() if new.fiscal_code else None,
        pec=new.pec,
        tier=settings.default_tier if new.tier is None else new.tier,
        max_space_kb=settings.default_max_space_kb if new.max_space_kb is None else new.max_space_kb,
        expires_on=new.expires_on or (now + DEFAULT_VALIDITY).date(),
        is_disabled=False,
        is_admin=new.is_admin,
        created_at=now,
    )
    repo.add(account)
    details = {"accountKind": account.kind, "tier": account.tier, "isAdmin": account.is_admin}
    audit.record(session, audit.Kind.ACCOUNT_CREATED, actor, clock, subject=account, details=details)
    return account


def find(session: UnitOfWork, username: str) -> Account | None:
    return AccountRepository(session).by_username(username)


def get(session: UnitOfWork, account_id: int) -> Account | None:
    return AccountRepository(session).get(account_id)


def get_by_username(session: UnitOfWork, username: str) -> Account:
    account = AccountRepository(session).by_username(username)
    if account is None:
        raise NotFound(f"no account named {username!r}")
    return account


def list_accounts(session: UnitOfWork) -> list[Account]:
    return AccountRepository(session).all()


def disable_account(session: UnitOfWork, username: str, clock: Clock, actor: audit.Actor) -> Account:
    """Disable an account: it can no longer sign in, and its tokens stop working."""
    account = get_by_username(session, username)
    if not account.is_disabled:
        account.is_disabled = True
        audit.record(session, audit.Kind.ACCOUNT_DISABLED, actor, clock, subject=account)
    return account


def is_expired(account: Account, clock: Clock) -> bool:
    return account.expires_on < clock.now().date()


def refusal_reason(session: UnitOfWork, account: Account, clock: Clock) -> str | None:
    """Why this account may not use the service now (§1 Access), or None if it may."""
    if account.is_disabled:
        return "The user is disabled"
    if is_expired(account, clock):
        return f"The user expired on {account.expires_on.isoformat()}"
    if not account.is_premium and not AccountRepository(session).has_active_delegate(account.id):
        return "Basic users need an active delegation to a Premium user to access the service"
    return None


def create_delegation(
    session: UnitOfWork,
    delegator: Account,
    delegate: Account,
    status: DelegationStatus,
    clock: Clock,
    actor: delegations.Who = None,
) -> Delegation:
    """Create a delegation through the life cycle of `accounts.delegations` (history, cycle check)."""
    return delegations.create(session, delegator, delegate, status, clock, actor)


def used_space_kb(session: UnitOfWork, account: Account) -> int:
    """Storage used by the account's stored files, in KB (rounded up: a 1-byte file uses 1 KB)."""
    return -(-blobs.used_bytes(session, account.id) // 1024)


class DelegationInvalid(VarcoError):
    """§7.2 0093: sending for a taxpayer without a valid delegation."""

    status, code = 200, "0093"


def taxpayer_for(session: UnitOfWork, caller: Account, country: str | None, vat: str | None) -> Account:
    """Whose invoice is this? The caller's own VAT, or an assignor's with an ACTIVE delegation to it."""
    if country == caller.country_code and vat == caller.vat_code:
        return caller
    issuer = f"{country or ''}{vat or ''}" or "absent"
    own = f"{caller.country_code}{caller.vat_code or ''}"
    found = AccountRepository(session).assignor_by_vat(caller.id, country or "", vat or "") if vat else None
    if found is None:
        raise DelegationInvalid(
            f"Delegation invalid: the issuer's VAT number {issuer} is neither yours ({own}) nor that of a "
            "taxpayer who delegated you"
        )
    assignor, status = found
    if status != DelegationStatus.ACTIVE or assignor.is_disabled:
        raise DelegationInvalid(
            f"Delegation invalid: the delegation from {assignor.username} ({issuer}) is {status}, not ACTIVE"
        )
    return assignor


# The paying account, by account id: read again when delegations change in the transaction.
_PAYERS: Fact[dict[int, Account]] = Fact("paying accounts", dict, forget_on=(Delegation,))


def paying_account(session: UnitOfWork, account: Account) -> Account:
    """§8.5: who pays for a transmission by/for `account`: follow ACTIVE delegations to the final
    Premium. Followed once per transaction and account (an upload asks in its §8 guard and again
    when it counts) unless delegations change in the transaction."""
    known = session.fact(_PAYERS)
    if account.id in known:
        return known[account.id]
    repo = AccountRepository(session)
    seen = {account.id}
    current = account
    while (delegate := repo.active_delegate_of(current.id)) is not None and delegate.id not in seen:
        seen.add(delegate.id)
        current = delegate
    known[account.id] = current
    return current


def pays_for_itself(session: UnitOfWork, account: Account) -> None:
    """The caller found that `account` has no ACTIVE delegation (it asked in a statement of its
    own): `paying_account` answers it for the rest of the transaction without a query."""
    session.fact(_PAYERS)[account.id] = account


def visible_account_ids(session: UnitOfWork, caller: Account) -> list[int]:
    """Tenancy: the taxpayers whose data the caller may see — its own and those that delegated it (ACTIVE)."""
    return [caller.id, *AccountRepository(session).active_delegator_ids(caller.id)]


def set_preflight_sdi_controls(session: UnitOfWork, account_id: int, enabled: bool) -> None:
    """preflightSdiControls: uploads checked against the SDI's own controls (docs/sdi-controls.md)."""
    account = session.get_one(Account, account_id)
    account.preflight_sdi_controls = enabled
