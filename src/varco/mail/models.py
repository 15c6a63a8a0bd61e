"""The mail outbox: every official message, whether delivered by SMTP or to a file."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class MailMessage(Base):
    __tablename__ = "mail_outbox"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(200), unique=True)  # one message per key, ever
    account_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"), index=True)
    to_address: Mapped[str | None] = mapped_column(String(255))  # the account's PEC (§8.4)
    subject: Mapped[str] = mapped_column(String(255))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    transport: Mapped[str | None] = mapped_column(String(8))  # "smtp" | "file"
    location: Mapped[str | None] = mapped_column(String(500))  # file path, or the SMTP server
