"""A Premium user's multiseller report (§2.6), prepared by a background job."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class ReportStatus(StrEnum):
    PREPARING = "PREPARING"  # job queued or running: calls answer 202
    READY = "READY"  # served with 200 until ready_at + report_ttl
    FAILED = "FAILED"  # the job gave up: the next call starts a new report


class MultisellerReport(Base):
    __tablename__ = "multiseller_reports"
    __table_args__ = (Index("ix_multiseller_reports_account_id_id", "account_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))  # the Premium user it is for
    status: Mapped[str] = mapped_column(String(16), default=ReportStatus.PREPARING)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"))
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ready_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    content: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # the §2.6 body, as served
