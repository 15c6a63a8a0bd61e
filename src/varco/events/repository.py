"""Queries on the event table."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Insert, bindparam, func, select

from varco.core.dialects import dialect_of
from varco.core.uow import UnitOfWork
from varco.events.models import Event

COLUMNS = ("account_id", "type", "subject", "payload", "occurred_at")


def _insert_under_lock() -> Insert:
    """INSERT INTO events (...) SELECT :values FROM (SELECT pg_advisory_xact_lock_shared(:lock))
    RETURNING id: the lock is taken before the row's id is drawn (the subquery's volatile call is
    evaluated first), in one round trip instead of two."""
    table = Event.__table__
    lock = select(func.pg_advisory_xact_lock_shared(bindparam("feed_lock"))).subquery("feed_lock")
    values = select(*(bindparam(name, type_=table.c[name].type) for name in COLUMNS)).select_from(lock)
    return table.insert().from_select(COLUMNS, values).returning(table.c.id)


_INSERT_UNDER_LOCK = _insert_under_lock()
# Several rows in one statement (SQLAlchemy's "insertmanyvalues"), their ids in the rows' order.
# On SQLite, SQLAlchemy keeps that order only by sending one INSERT per row; in one statement the
# ids come back in any order, but SQLite's one writer numbers the rows in the order given.
_INSERT = Event.__table__.insert().returning(Event.__table__.c.id, sort_by_parameter_order=True)
_INSERT_ANY_ORDER = Event.__table__.insert().returning(Event.__table__.c.id)


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

    def append(self, rows: list[dict[str, Any]]) -> list[int]:
        """Append events (the values of `COLUMNS`), in one statement; their ids, in order."""
        if not rows:
            return []
        if dialect_of(self.session).one_writer:
            return sorted(self.session.connection().execute(_INSERT_ANY_ORDER, rows).scalars())
        return list(self.session.connection().execute(_INSERT, rows).scalars())

    def append_holding_lock(self, values: dict[str, Any], lock: int) -> int:
        """Append an event after taking the advisory lock `lock` shared (PostgreSQL), in one
        statement; its id."""
        parameters = {**values, "feed_lock": lock}
        return self.session.connection().execute(_INSERT_UNDER_LOCK, parameters).scalar_one()
