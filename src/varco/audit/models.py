"""The audit trail's one table. Append-only: nothing in varco updates or deletes a row, and the
migration adds triggers that refuse UPDATE and DELETE (docs/operations.md, "Audit trail")."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class AuditEvent(Base):
    """Who did what to whom, when and from where. Account ids and user names are snapshots, not
    foreign keys: a row keeps saying what happened whatever becomes of the account."""

    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    kind: Mapped[str] = mapped_column(String(64), index=True)  # audit.service.Kind, e.g. auth.signin.failed
    # The account that acted; none for the CLI ("cli"), varco itself ("system") or a client not
    # signed in (username none).
    actor_account_id: Mapped[int | None] = mapped_column(Integer)
    actor_username: Mapped[str | None] = mapped_column(String(150), index=True)
    # The account the event concerns (for a refused sign-in: the user name as typed, no id).
    subject_account_id: Mapped[int | None] = mapped_column(Integer)
    subject_username: Mapped[str | None] = mapped_column(String(150), index=True)
    ip: Mapped[str | None] = mapped_column(String(45))  # the client, as the §8.1 limits see it
    request_id: Mapped[str | None] = mapped_column(String(64))  # ours, or a client's plain X-Request-ID
    details: Mapped[dict[str, Any]] = mapped_column(JSON)  # whitelisted keys only (audit.service)
