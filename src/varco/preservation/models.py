"""Preservation packages (PDD): one row per sealed package, chained per account by SHA-256."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime
from varco.invoices.models import Invoice


class PreservationPackage(Base):
    """A sealed ZIP of an invoice file and its notifications; `previous_sha256` links the chain."""

    __tablename__ = "preservation_packages"
    # The unique sequence is what keeps the chain linear when two sealers race (see service).
    __table_args__ = (
        UniqueConstraint("account_id", "sequence"),
        UniqueConstraint("invoice_id", "version"),
        UniqueConstraint("comfin_request_id", "version"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    sequence: Mapped[int] = mapped_column(Integer)  # 1, 2, ... per account
    # Exactly one of the two: an invoice's package, or a financial communication's (docs/comfin.md).
    invoice_id: Mapped[int | None] = mapped_column(ForeignKey("invoices.id"))
    comfin_request_id: Mapped[int | None] = mapped_column(ForeignKey("comfin_requests.id"))
    version: Mapped[int] = mapped_column(Integer)  # 1, 2, ... per invoice/communication (re-sealed on news)
    notification_count: Mapped[int] = mapped_column(Integer)
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    name: Mapped[str] = mapped_column(String(120))  # <invoice>.conservazione.zip
    sha256: Mapped[str] = mapped_column(String(64))  # of the whole ZIP
    previous_sha256: Mapped[str | None] = mapped_column(String(64))
    sealed_at: Mapped[datetime] = mapped_column(UTCDateTime)


# The reconciler's question "which final invoices have no package yet?" stays an index lookup.
Index("ix_invoices_pdd_available_state", Invoice.pdd_available, Invoice.state)
