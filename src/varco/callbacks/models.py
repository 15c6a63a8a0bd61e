"""Callback endpoints and their deliveries (one row per endpoint and event)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class CallbackEndpoint(Base):
    """A URL an account registered to receive its events; the secret signs every delivery."""

    __tablename__ = "callbacks"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)  # the owner
    url: Mapped[str] = mapped_column(String(2000))
    event_types: Mapped[list[str]] = mapped_column(JSON)
    description: Mapped[str] = mapped_column(String(255), default="")
    # Needed in clear to sign, so encrypted with a key derived from VARCO_SECRET_KEY (secrets.py).
    secret_encrypted: Mapped[str] = mapped_column(String(255))
    secret_hint: Mapped[str] = mapped_column(String(8))  # last characters, to tell secrets apart
    status: Mapped[str] = mapped_column(String(16))  # EndpointStatus
    disabled_reason: Mapped[str | None] = mapped_column(String(500))
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class CallbackDelivery(Base):
    """One event for one endpoint. Deliveries of a lane (endpoint + ordering key) go one at a time,
    oldest first: a later event of an invoice waits until the earlier one is delivered or given up."""

    __tablename__ = "callback_deliveries"
    __table_args__ = (
        UniqueConstraint("callback_id", "event_id"),  # fan-out twice creates nothing new
        Index("ix_callback_deliveries_lane", "callback_id", "lane", "status", "id"),
        Index("ix_callback_deliveries_due", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    callback_id: Mapped[int] = mapped_column(ForeignKey("callbacks.id"))
    event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id"))  # None: a test event
    event_uid: Mapped[str] = mapped_column(String(40))  # eventId, also sent as Varco-Event-Id
    lane: Mapped[str] = mapped_column(String(120))  # invoice file name; the event type if none
    is_test: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str] = mapped_column(String(16))  # DeliveryStatus
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime)  # not before (clock time)
    leased_until: Mapped[datetime | None] = mapped_column(UTCDateTime)  # an attempt is in flight
    first_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # the retry window starts
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(String(500))
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # The request that caused the event (its X-Request-ID): a delivery queued behind another is
    # sent by that one's job, which runs under another request's id.
    request_id: Mapped[str | None] = mapped_column(String(64))
