"""§8.5 usage counter: accepted transmissions per paying account and year."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from varco.accounts.models import Account
from varco.core.clock import Clock
from varco.core.db import per_dialect
from varco.events import service as events
from varco.invoices.models import UsageCounter

# session.info: the counters changed in this transaction, by (account_id, year): a `Charged` or a
# UsageCounter changed through the ORM. The annual limit (limits/annual.py) checks them at commit.
TOUCHED = "varco_usage_touched"

_COUNTERS = UsageCounter.__table__


def _add_one(insert):  # noqa: ANN001, ANN202 - the dialect's insert construct and its statement
    # One statement creates the counter or adds one and returns the new count; on PostgreSQL the
    # conflicting row stays locked until commit, as SELECT ... FOR UPDATE would keep it.
    return (
        insert(_COUNTERS)
        .values(account_id=bindparam("account_id"), year=bindparam("year"), count=1)
        .on_conflict_do_update(index_elements=["account_id", "year"], set_={"count": _COUNTERS.c.count + 1})
        .returning(_COUNTERS.c.count)
    )


_ADD_ONE = per_dialect(_add_one)
USED = select(_COUNTERS.c.count).where(
    _COUNTERS.c.account_id == bindparam("account_id"), _COUNTERS.c.year == bindparam("year")
)


@dataclass(frozen=True)
class Charged:
    account_id: int
    year: int
    count: int


def touched(session: Session, account_id: int, year: int, counter: object) -> None:
    """Note a changed counter for the annual-limit check at commit."""
    session.info.setdefault(TOUCHED, {})[(account_id, year)] = counter


def charge(session: Session, payer: Account, clock: Clock) -> int:
    """Count one accepted transmission against `payer` (same transaction as the upload)."""
    now = clock.now()
    count = (
        session.connection()
        .execute(_ADD_ONE(session), {"account_id": payer.id, "year": now.year})
        .scalar_one()
    )
    touched(session, payer.id, now.year, Charged(payer.id, now.year, count))
    events.record(
        session,
        payer.id,
        "updateUsage",
        {"username": payer.username, "year": now.year, "usedTransmissions": count},
        now,
    )
    return count


def used(session: Session, account_id: int, year: int) -> int:
    session.flush()  # a Core select: no autoflush of its own
    return session.scalar(USED, {"account_id": account_id, "year": year}) or 0
