"""§8.4 annual limit: when a paying account's accepted transmissions (§8.5 usage counter) reach
its tier's yearly number, the account is locked, one official e-mail goes to its PEC, and further
transmissions get 429 until an operator unlocks it (`varco users unlock`) or the year ends.

The lock is taken in the very transaction whose charge reaches the limit: every charge
(`limits.usage.charge`) registers the `LimitCheck` of its transaction, run just before the commit,
so no code path that charges usage can miss it; a charge past the limit of an active lock (two
uploads racing past the pre-check) fails that transaction: nothing is stored.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, select

from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.accounts.repository import ACTIVE_DELEGATE
from varco.audit import service as audit
from varco.core.clock import Clock, current_clock
from varco.core.errors import BadRequest
from varco.core.uow import UnitOfWork
from varco.invoices.models import UsageCounter
from varco.limits.errors import annual_limit_reached
from varco.limits.models import AnnualLock
from varco.mail.service import queue_message
from varco.settings import Settings, get_settings

log = logging.getLogger("varco.limits")


class NotLocked(BadRequest):
    """The account is not in annual lock."""


def annual_limit(settings: Settings, tier: int) -> int:
    return settings.tiers.get(tier, settings.tiers[settings.default_tier])[1]


def _lock_row(session: UnitOfWork, account_id: int, year: int, limit: int) -> AnnualLock | None:
    query = select(AnnualLock).where(
        AnnualLock.account_id == account_id, AnnualLock.year == year, AnnualLock.annual_limit == limit
    )
    return session.scalar(query)


_COUNTERS = UsageCounter.__table__.c
USED = select(_COUNTERS.count).where(
    _COUNTERS.account_id == bindparam("account_id"), _COUNTERS.year == bindparam("year")
)


def used_transmissions(session: UnitOfWork, account_id: int, year: int) -> int:
    """§8.5: the transmissions counted against the account in the year."""
    session.flush()  # a Core select: no autoflush of its own
    return session.scalar(USED, {"account_id": account_id, "year": year}) or 0


# Run on every authenticated call (§8 guard) and every upload: built once, bound per call.
_LOCKS = AnnualLock.__table__.c
_IS_ACTIVE_LOCK = (
    _LOCKS.account_id == bindparam("account_id"),
    _LOCKS.year == bindparam("year"),
    _LOCKS.unlocked_at.is_(None),
)
_ACTIVE_LOCK = select(AnnualLock).where(*_IS_ACTIVE_LOCK).order_by(_LOCKS.id).limit(1)
# The active lock's figures without loading the row (every upload asks, twice): a Core select on
# the table's columns (half the cost of an ORM-enabled one).
_ACTIVE_LOCK_USED = (
    select(_LOCKS.used, _LOCKS.annual_limit).where(*_IS_ACTIVE_LOCK).order_by(_LOCKS.id).limit(1)
)


# What every transmission checks first, in one statement: the active lock's limit (None: no lock)
# and the transmissions used this year.
_LOCK_AND_USED = select(
    _ACTIVE_LOCK_USED.with_only_columns(_LOCKS.annual_limit).scalar_subquery().label("lock_limit"),
    USED.scalar_subquery().label("used"),
)


# A transmission's check when the caller may pay for itself: whether it delegates a Premium
# (§8.5), with its own lock and count, which are all that is needed when it does not.
_DELEGATE_LOCK_AND_USED = _LOCK_AND_USED.add_columns(ACTIVE_DELEGATE.scalar_subquery().label("delegate_id"))


def active_lock(session: UnitOfWork, account_id: int, year: int) -> AnnualLock | None:
    return session.scalars(_ACTIVE_LOCK, {"account_id": account_id, "year": year}).first()


def lock_if_reached(
    session: UnitOfWork, account: Account, year: int, used: int, settings: Settings, clock: Clock
) -> AnnualLock | None:
    """Lock `account` and queue the official e-mail if `used` reached its annual limit (once per limit)."""
    limit = annual_limit(settings, account.tier)
    if used < limit:
        return None
    active = active_lock(session, account.id, year)
    if active is not None or _lock_row(session, account.id, year, limit) is not None:
        return active  # already locked, or unlocked by an operator at this very limit
    now = clock.now()
    lock = AnnualLock(account_id=account.id, year=year, annual_limit=limit, used=used, locked_at=now)
    session.add(lock)
    session.flush()
    queue_message(
        session,
        key=f"annual-lock:{lock.id}",
        account_id=account.id,
        to_address=account.pec,
        subject=f"varco: annual limit of {limit} transmissions reached - account {account.username} locked",
        body=_lock_letter(account, lock),
        clock=clock,
    )
    log.warning("account %s locked: %d of %d transmissions in %d", account.username, used, limit, year)
    return lock


def _lock_letter(account: Account, lock: AnnualLock) -> str:
    return (
        f"Account: {account.username} ({account.description})\n"
        f"VAT number: {account.country_code}{account.vat_code or ''}\n\n"
        f"The account has reached the annual limit of its tier {account.tier}: {lock.annual_limit} "
        f"accepted transmissions in {lock.year} ({lock.used} counted on "
        f"{lock.locked_at:%Y-%m-%d %H:%M} UTC).\n\n"
        "As the service conditions provide (annual limit, operational lock), the account is now in "
        "operational lock: further invoice uploads and financial communications are refused with "
        "HTTP 429 until the lock is lifted. Invoices already accepted are processed as usual, and "
        "searches and downloads keep working.\n\n"
        "To lift the lock, ask the operator of this service to move the account to a higher tier or "
        "to unlock it. The counter starts again from zero on 1 January.\n\n"
        "--\n"
        "Limite annuale raggiunto: l'utenza e' in blocco operativo; le nuove trasmissioni sono "
        "rifiutate fino allo sblocco da parte del gestore del servizio.\n"
    )


def _seconds_to_new_year(now: datetime) -> int:
    new_year = datetime(now.year + 1, 1, 1, tzinfo=UTC)
    return max(1, int((new_year - now).total_seconds()))


def refuse_if_locked(session: UnitOfWork, payer: Account, settings: Settings, clock: Clock) -> None:
    """Before a transmission: 429 AR10 if the paying account is in annual lock (§8.4)."""
    now = clock.now()
    session.flush()  # a Core select: no autoflush of its own
    figures = session.execute(_LOCK_AND_USED, {"account_id": payer.id, "year": now.year}).one()
    _refuse_if_locked(session, payer, figures, settings, now)


def refuse_transmission_if_locked(
    session: UnitOfWork, account: Account, settings: Settings, clock: Clock
) -> None:
    """`refuse_if_locked` for the paying account of `account` (§8.5): one statement when it pays
    for itself (no ACTIVE delegation), the usual case."""
    now = clock.now()
    session.flush()  # a Core select: no autoflush of its own
    params = {"account_id": account.id, "delegator_id": account.id, "year": now.year}
    figures = session.execute(_DELEGATE_LOCK_AND_USED, params).one()
    if figures.delegate_id is not None:
        refuse_if_locked(session, accounts.paying_account(session, account), settings, clock)
        return
    accounts.pays_for_itself(session, account)  # its charge then asks no more
    _refuse_if_locked(session, account, figures, settings, now)


def _refuse_if_locked(
    session: UnitOfWork, payer: Account, figures: Any, settings: Settings, now: datetime
) -> None:
    locked_at_limit = figures.lock_limit
    limit = locked_at_limit if locked_at_limit is not None else annual_limit(settings, payer.tier)
    if locked_at_limit is None:
        used = figures.used or 0
        # A limit reached without a lock row (the tier table was lowered by configuration) refuses too.
        if used < limit or _lock_row(session, payer.id, now.year, limit) is not None:
            return
    raise annual_limit_reached(
        f"Annual limit reached: {limit} accepted transmissions in {now.year} for account "
        f"{payer.username} (tier {payer.tier}, §8.4); the account is locked until the operator "
        "unlocks it or the year ends",
        _seconds_to_new_year(now),
    )


def unlock(session: UnitOfWork, account: Account, operator: audit.Actor, clock: Clock) -> AnnualLock:
    """Lift the annual lock of this year (operator); it holds until the limit changes or the year ends."""
    now = clock.now()
    lock = active_lock(session, account.id, now.year)
    if lock is None:
        settings = get_settings()
        used = used_transmissions(session, account.id, now.year)
        limit = annual_limit(settings, account.tier)
        if used < limit or _lock_row(session, account.id, now.year, limit) is not None:
            raise NotLocked(
                f"{account.username} is not locked: {used} of {limit} transmissions in {now.year}"
            )
        lock = AnnualLock(account_id=account.id, year=now.year, annual_limit=limit, used=used, locked_at=now)
        session.add(lock)
    lock.unlocked_at, lock.unlocked_by = now, operator.username
    session.flush()
    details = {"year": lock.year, "count": lock.used, "tier": account.tier}
    audit.record(session, audit.Kind.UNLOCKED, operator, clock, subject=account, details=details)
    return lock


def set_tier(
    session: UnitOfWork,
    account: Account,
    tier: int,
    settings: Settings,
    clock: Clock,
    operator: audit.Actor,
) -> None:
    """Change the tier (§8.2): a higher annual limit lifts the lock, a lower one already reached locks now."""
    if tier not in settings.tiers:
        raise BadRequest(f"invalid tier {tier}: choose one of {sorted(settings.tiers)}")
    if account.tier != tier:
        details = {"from": account.tier, "to": tier}
        audit.record(session, audit.Kind.TIER_CHANGED, operator, clock, subject=account, details=details)
    account.tier = tier
    now = clock.now()
    used = used_transmissions(session, account.id, now.year)
    lock = active_lock(session, account.id, now.year)
    if lock is not None and used < annual_limit(settings, tier):
        lock.unlocked_at, lock.unlocked_by = now, f"tier {tier}"
    lock_if_reached(session, account, now.year, used, settings, clock)


class LimitCheck:
    """Registered by every charge (`limits.usage.charge`), run before the commit: lock an account
    whose count reached its limit, refuse a count past an active lock."""

    def __init__(self) -> None:
        self.counts: dict[tuple[int, int], int] = {}  # (account id, year) -> count after the charge

    def __call__(self, session: UnitOfWork) -> None:
        settings, clock = get_settings(), current_clock()
        for (account_id, year), count in self.counts.items():
            account = session.get(Account, account_id)
            if account is None:
                continue
            session.flush()  # a Core select: no autoflush of its own
            lock = session.execute(_ACTIVE_LOCK_USED, {"account_id": account.id, "year": year}).first()
            if lock is None:
                lock_if_reached(session, account, year, count, settings, clock)
            elif count > lock.used:
                raise annual_limit_reached(
                    f"Annual limit reached: {lock.annual_limit} accepted transmissions in {year} for "
                    f"account {account.username} (tier {account.tier}, §8.4); nothing was stored",
                    _seconds_to_new_year(clock.now()),
                )
