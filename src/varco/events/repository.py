"""Queries on the event table."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Insert, bindparam, func, select

from varco.core.db import detached_row
from varco.core.uow import UnitOfWork
from varco.events.models import Event

_COLUMNS = ("account_id", "type", "subject", "payload", "occurred_at")


def _insert_under_lock() -> Insert:
    """INSERT INTO events (...) SELECT :values FROM (SELECT pg_advisory_xact_lock_shared(:lock))
    RETURNING id: the lock is taken before the row's id is drawn (the subquery's volatile call is
    evaluated first), in one round trip instead of two."""
    table = Event.__table__
    lock = select(func.pg_advisory_xact_lock_shared(bindparam("feed_lock"))).subquery("feed_lock")
    values = select(*(bindparam(name, type_=table.c[name].type) for name in _COLUMNS)).select_from(lock)
    return table.insert().from_select(_COLUMNS, values).returning(table.c.id)


_INSERT_UNDER_LOCK = _insert_under_lock()


class EventRepository:
    def __init__(self, session: UnitOfWork) -> None:
        self.session = session

    def after(self, account_ids: list[int], after: int, limit: int) -> list[Event]:
        query = (
            select(Event)
            .where(Event.account_id.in_(account_ids), Event.id > after)
            .order_by(Event.id)
            .limit(limit)
        )
        return list(self.session.scalars(query))

    def append_holding_lock(self, values: dict[str, Any], lock: int) -> Event:
        """Append an event after taking the advisory lock `lock` shared (PostgreSQL), in one
        statement; as `core.db.append_row`, the object returned is not in the session."""
        parameters = {**values, "feed_lock": lock}
        row_id = self.session.connection().execute(_INSERT_UNDER_LOCK, parameters).scalar_one()
        return detached_row(Event, values, row_id)
