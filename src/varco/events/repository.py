"""Queries on the event table."""

from __future__ import annotations

from sqlalchemy import select

from varco.core.uow import UnitOfWork
from varco.events.models import Event


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
