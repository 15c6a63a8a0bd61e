"""The mail outbox: every official message, whether delivered by SMTP or to a file; and e-mail receipt."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
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


class MailAttachment(Base):
    """A file sent with a message: a stored blob committed with it (a retry sends the same bytes)."""

    __tablename__ = "mail_attachments"
    __table_args__ = (UniqueConstraint("message_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    message_id: Mapped[int] = mapped_column(ForeignKey("mail_outbox.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)  # 1-based, the order of the MIME parts
    filename: Mapped[str] = mapped_column(String(255))
    content_type: Mapped[str] = mapped_column(String(100))  # e.g. "application/pdf"
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    # Set for a PDF made when the message is sent: the blob is the invoice file of this name, not
    # the attachment (rendering is slow; it must not run in the transaction that queues the mail).
    rendered_from: Mapped[str | None] = mapped_column(String(255))


class MailReceiptSetting(Base):
    """§1: received invoices may also reach the client by e-mail; one setting per account."""

    __tablename__ = "mail_receipt_settings"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    is_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    address: Mapped[str | None] = mapped_column(String(255))
    enabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # invoices received before are not sent
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class MailReceipt(Base):
    """One received invoice queued for e-mail: the unique invoice id makes the send happen once."""

    __tablename__ = "mail_receipts"

    id: Mapped[int] = mapped_column(primary_key=True)
    invoice_id: Mapped[int] = mapped_column(ForeignKey("invoices.id"), unique=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    message_id: Mapped[int] = mapped_column(ForeignKey("mail_outbox.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
