"""Tables owned by core: the durable job table."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class JobRow(Base):
    """A unit of background work. The row is the truth; the huey message is only a wake-up call."""

    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    args: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # Optional idempotency key: enqueueing the same key twice yields one job.
    key: Mapped[str | None] = mapped_column(String(200), unique=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending | done | failed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    run_after: Mapped[datetime] = mapped_column(UTCDateTime)  # not before (clock time)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # Last time a worker was asked to run it; the reconciler re-sends pending rows older than this.
    sent_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_jobs_status_sent_at", "status", "sent_at"),)


class PeriodicRun(Base):
    """When periodic work last ran, whichever process ran it: the lease that makes it once per
    interval across every worker (core/scheduler.py)."""

    __tablename__ = "periodic_runs"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    last_run_at: Mapped[datetime] = mapped_column(UTCDateTime)
    holder: Mapped[str] = mapped_column(String(128))  # host:pid of the process that ran it


class IdempotencyKey(Base):
    """A request sent with an `Idempotency-Key` header and the answer it got (core/idempotency.py)."""

    __tablename__ = "idempotency_keys"
    __table_args__ = (UniqueConstraint("account_id", "route", "key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(Integer)  # the caller (whose keys these are)
    route: Mapped[str] = mapped_column(String(32))  # upload, uploadSigned, esito, comfin
    key: Mapped[str] = mapped_column(String(255))
    body_sha256: Mapped[str] = mapped_column(String(64))
    response: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # None while the first is running
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
