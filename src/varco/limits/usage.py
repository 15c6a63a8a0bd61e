"""§8.5 usage counter: accepted transmissions per paying account and year. Every charge registers
the §8.4 annual-limit check of its transaction (limits/annual.py), run just before the commit."""

from __future__ import annotations

from sqlalchemy import bindparam

from varco.accounts.models import Account
from varco.core.clock import Clock
from varco.core.dialects import per_dialect
from varco.core.uow import UnitOfWork
from varco.events import service as events
from varco.invoices.models import UsageCounter
from varco.limits import annual

_COUNTERS = UsageCounter.__table__


def _add_one(insert):  # the dialect's insert construct and its statement
    # One statement creates the counter or adds one and returns the new count; on PostgreSQL the
    # conflicting row stays locked until commit, as SELECT ... FOR UPDATE would keep it.
    return (
        insert(_COUNTERS)
        .values(account_id=bindparam("account_id"), year=bindparam("year"), count=1)
        .on_conflict_do_update(index_elements=["account_id", "year"], set_={"count": _COUNTERS.c.count + 1})
        .returning(_COUNTERS.c.count)
    )


_ADD_ONE = per_dialect(_add_one)


def charge(session: UnitOfWork, payer: Account, clock: Clock) -> int:
    """Count one accepted transmission against `payer` (same transaction as the upload)."""
    now = clock.now()
    count = (
        session.connection()
        .execute(_ADD_ONE(session), {"account_id": payer.id, "year": now.year})
        .scalar_one()
    )
    # §8.4: checked just before the commit, once for every charge of the transaction
    session.before_commit(annual.LimitCheck(), key=annual.LimitCheck).counts[(payer.id, now.year)] = count
    events.record(
        session,
        payer.id,
        "updateUsage",
        {"username": payer.username, "year": now.year, "usedTransmissions": count},
        now,
    )
    return count
