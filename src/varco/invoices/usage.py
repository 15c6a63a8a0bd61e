"""§8.5 usage counter: accepted transmissions per paying account and year."""

from __future__ import annotations

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from varco.accounts.models import Account
from varco.core.clock import Clock
from varco.events import service as events
from varco.invoices.models import UsageCounter

_COUNTER_FOR_UPDATE = (
    select(UsageCounter)
    .where(UsageCounter.account_id == bindparam("account_id"), UsageCounter.year == bindparam("year"))
    .with_for_update()
)


def charge(session: Session, payer: Account, clock: Clock) -> int:
    """Count one accepted transmission against `payer` (same transaction as the upload)."""
    now = clock.now()
    counter = session.scalar(_COUNTER_FOR_UPDATE, {"account_id": payer.id, "year": now.year})
    if counter is None:
        counter = UsageCounter(account_id=payer.id, year=now.year, count=0)
        session.add(counter)
    counter.count += 1  # flushed with the event below (one flush)
    events.record(
        session,
        payer.id,
        "updateUsage",
        {"username": payer.username, "year": now.year, "usedTransmissions": counter.count},
        now,
    )
    return counter.count


def used(session: Session, account_id: int, year: int) -> int:
    query = select(UsageCounter.count).where(UsageCounter.account_id == account_id, UsageCounter.year == year)
    return session.scalar(query) or 0
