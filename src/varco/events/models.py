"""The event table: an outbox written in the same transaction as the change it reports."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class Event(Base):
    """`id` is the monotonic cursor of the event feed (per account, ordered by id)."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_account_id_id", "account_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    type: Mapped[str] = mapped_column(String(40))  # createInvoice | updateInvoiceStatus | updateUsage
    subject: Mapped[str | None] = mapped_column(String(80))  # e.g. the invoice file name (ordering key)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    occurred_at: Mapped[datetime] = mapped_column(UTCDateTime)
