"""Queries of the audit trail: add a row, read a filtered page. No update, no delete."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select

from varco.audit.models import AuditEvent
from varco.core.uow import UnitOfWork


@dataclass(frozen=True)
class Filters:
    """What a listing narrows on; None means any."""

    kind: str | None = None  # a kind, or a dotted prefix of kinds: "auth" is every auth.* kind
    username: str | None = None  # the actor's or the subject's user name
    ip: str | None = None
    start: datetime | None = None  # inclusive
    end: datetime | None = None  # inclusive


class AuditRepository:
    def __init__(self, session: UnitOfWork) -> None:
        self.session = session

    def add(self, event: AuditEvent) -> None:
        self.session.add(event)

    def page(self, where: Filters, *, offset: int, limit: int) -> tuple[list[AuditEvent], int]:
        """The matching events, newest first, and how many match in all."""
        conditions = _conditions(where)
        total = self.session.scalar(select(func.count()).select_from(AuditEvent).where(*conditions)) or 0
        if offset >= total:
            return [], total
        query = select(AuditEvent).where(*conditions).order_by(AuditEvent.id.desc())
        return list(self.session.scalars(query.offset(offset).limit(limit))), total


def _conditions(where: Filters) -> list[Any]:
    conditions: list[Any] = []
    if where.kind is not None:
        conditions.append(
            or_(AuditEvent.kind == where.kind, AuditEvent.kind.startswith(where.kind + ".", autoescape=True))
        )
    if where.username is not None:
        conditions.append(
            or_(AuditEvent.actor_username == where.username, AuditEvent.subject_username == where.username)
        )
    if where.ip is not None:
        conditions.append(AuditEvent.ip == where.ip)
    if where.start is not None:
        conditions.append(AuditEvent.at >= where.start)
    if where.end is not None:
        conditions.append(AuditEvent.at <= where.end)
    return conditions
