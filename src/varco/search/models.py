"""Bulk download requests (POST /api/v2/invoices-{out,in}/download): one row per request."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime
from varco.invoices.models import Invoice


class DownloadJob(Base):
    """A ZIP being built in chunks; `id` is the public jobId (random, not guessable)."""

    __tablename__ = "search_downloads"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)  # who asked
    direction: Mapped[str] = mapped_column(String(3))  # out | in
    invoice_ids: Mapped[list[int]] = mapped_column(JSON)
    kinds: Mapped[list[str]] = mapped_column(JSON)  # XML P7M NOTIFICATIONS PDF REPORT PDD
    status: Mapped[str] = mapped_column(String(10))  # PENDING PROCESSING COMPLETED FAILED
    done: Mapped[int] = mapped_column(Integer, default=0)  # invoices packed so far
    part_blob_ids: Mapped[list[int]] = mapped_column(JSON, default=list)  # one ZIP per chunk
    blob_id: Mapped[int | None] = mapped_column(ForeignKey("blobs.id"))  # the finished ZIP
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


class InvoiceMonthCount(Base):
    """Files per taxpayer, direction and creation month (UTC), kept by database triggers on `invoices`
    (migration 0013): an exact total over whole months without counting the files one by one."""

    __tablename__ = "invoice_month_counts"

    account_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    direction: Mapped[str] = mapped_column(String(3), primary_key=True)
    month: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)  # yyyymm
    count: Mapped[int] = mapped_column(Integer)


# Every list: tenancy + direction + creation window, ordered by (created_at, id). With the id in the
# key, counting and choosing a page's ids are index-only scans; `state` and `document_types` (the
# extra filters of version 2) ride along so that those filters stay index-only too
# (docs/performance.md, Search).
Index(
    "ix_invoices_search_window",
    Invoice.account_id,
    Invoice.direction,
    Invoice.created_at,
    Invoice.id,
    Invoice.state,
    Invoice.document_types,
)

# The counterparty filters (receiverVatcode, senderVatcode): without them such a list read every
# file of the window from the table on SQLite (docs/search.md, "Query plans"). The VAT number comes
# first: a list without that filter has no use for them and keeps to the search index, and a
# look-up by VAT number alone (the duplicate check of invoices/preflight.py) still has its index.
Index(
    "ix_invoices_receiver_window",
    Invoice.receiver_vat,
    Invoice.account_id,
    Invoice.direction,
    Invoice.created_at,
    Invoice.id,
)
Index(
    "ix_invoices_sender_window",
    Invoice.sender_vat,
    Invoice.account_id,
    Invoice.direction,
    Invoice.created_at,
    Invoice.id,
)
