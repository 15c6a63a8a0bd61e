"""Sent and received invoice files, the invoices inside them, and their SDI notifications."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Date,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    Numeric,
    String,
    UniqueConstraint,
    event,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from varco.core.db import Base, UTCDateTime


class Invoice(Base):
    """One SDI file (a batch may hold several invoices: `bodies`)."""

    __tablename__ = "invoices"
    __table_args__ = (
        Index("ix_invoices_state_updated", "state", "updated_at"),
        # Unique per direction: a file one varco client sends to another is stored twice under its
        # SDI name, once sent ("out") and once received ("in"). Filename first: lookups by name.
        UniqueConstraint("filename", "direction", name="uq_invoices_filename_direction"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    direction: Mapped[str] = mapped_column(String(3))  # "out" sent, "in" received
    filename: Mapped[str] = mapped_column(String(64))
    sdi_id: Mapped[str | None] = mapped_column(String(32), index=True)  # IdentificativoSdI
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))  # the taxpayer it belongs to
    uploaded_by_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"))  # whose token sent it
    charged_account_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id")
    )  # §8.5 usage attribution
    format: Mapped[str] = mapped_column(String(5))  # FPA12 | FPR12 | FSM10
    state: Mapped[int] = mapped_column(Integer)  # InvoiceState
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    content_sha256: Mapped[str] = mapped_column(String(64), index=True)
    is_signed: Mapped[bool] = mapped_column(Boolean, default=False)
    signature: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # signature report
    skip_extra_schema: Mapped[bool] = mapped_column(Boolean, default=False)
    codice_destinatario: Mapped[str | None] = mapped_column(String(7))
    pec_destinatario: Mapped[str | None] = mapped_column(String(256))
    sender_description: Mapped[str | None] = mapped_column(String(255))
    sender_country: Mapped[str | None] = mapped_column(String(2))
    sender_vat: Mapped[str | None] = mapped_column(String(28))  # indexed in search/models.py
    sender_fiscal_code: Mapped[str | None] = mapped_column(String(28))
    receiver_description: Mapped[str | None] = mapped_column(String(255))
    receiver_country: Mapped[str | None] = mapped_column(String(2))
    receiver_vat: Mapped[str | None] = mapped_column(String(28))  # indexed in search/models.py
    receiver_fiscal_code: Mapped[str | None] = mapped_column(String(28))
    sdi_errors: Mapped[list[dict[str, str]]] = mapped_column(JSON, default=list)  # [{code, description}]
    pdd_available: Mapped[bool] = mapped_column(Boolean, default=False)
    # Distinct TipoDocumento of the bodies, sorted, space-separated ("TD01", "TD01 TD04"): the search
    # filter reads it inside the search index instead of joining the bodies (set on insert, below).
    document_types: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    sdi_received_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # when the SDI took the file
    # when the checks passed and the channel took the file; with SDICoop the IdentificativoSdI
    # (and state 3) come later, from the SDI's answer
    handed_over_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # RC time (PA: DT deadline base)
    outcome_deadline_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # DT / esito window end

    bodies: Mapped[list[InvoiceBody]] = relationship(
        back_populates="invoice",
        order_by="InvoiceBody.position",
        cascade="all, delete-orphan",
        lazy="selectin",
    )


def document_types(types: Iterable[str | None]) -> str | None:
    """`Invoice.document_types` of bodies with these TipoDocumento."""
    return " ".join(sorted({t for t in types if t})) or None


@event.listens_for(Invoice, "before_insert")
def _document_types(_mapper: object, _connection: object, invoice: Invoice) -> None:
    invoice.document_types = document_types(b.document_type for b in invoice.bodies)


class InvoiceBody(Base):
    """One invoice inside the file (FatturaElettronicaBody)."""

    __tablename__ = "invoice_bodies"
    __table_args__ = (UniqueConstraint("invoice_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    invoice_id: Mapped[int] = mapped_column(ForeignKey("invoices.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)  # 1-based
    document_type: Mapped[str | None] = mapped_column(String(4))
    number: Mapped[str | None] = mapped_column(String(20))
    invoice_date: Mapped[date | None] = mapped_column(Date)
    currency: Mapped[str | None] = mapped_column(String(3))
    total_document: Mapped[Decimal | None] = mapped_column(Numeric(18, 2))
    total_vat: Mapped[Decimal | None] = mapped_column(Numeric(18, 2))
    net_payable: Mapped[Decimal | None] = mapped_column(Numeric(18, 2))

    invoice: Mapped[Invoice] = relationship(back_populates="bodies")


class Notification(Base):
    """An SDI message about an invoice file (RC, NS, MC, NE, DT, AT, MT, EC, SE)."""

    __tablename__ = "notifications"

    id: Mapped[int] = mapped_column(primary_key=True)
    invoice_id: Mapped[int] = mapped_column(ForeignKey("invoices.id"), index=True)
    type: Mapped[str] = mapped_column(String(2))
    filename: Mapped[str] = mapped_column(String(80), unique=True)  # also the idempotency key
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    result: Mapped[str | None] = mapped_column(String(4))  # EC01 | EC02 for NE/EC
    number: Mapped[str | None] = mapped_column(String(20))  # invoice number inside a batch
    notification_date: Mapped[datetime] = mapped_column(UTCDateTime)  # date in the SDI message
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class FilenameSequence(Base):
    """Per-transmitter progressive for file names (`IT<code>_<5 chars>`), taken under a row lock."""

    __tablename__ = "filename_sequences"

    transmitter: Mapped[str] = mapped_column(String(30), primary_key=True)
    last_value: Mapped[int] = mapped_column(Integer, default=0)


class UsageCounter(Base):
    """§8.5: accepted transmissions per paying account and year."""

    __tablename__ = "usage_counters"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    year: Mapped[int] = mapped_column(Integer, primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)


class InvoiceTransition(Base):
    """State history; the unique key makes every state change idempotent (retries, duplicates)."""

    __tablename__ = "invoice_transitions"
    __table_args__ = (UniqueConstraint("invoice_id", "key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    invoice_id: Mapped[int] = mapped_column(ForeignKey("invoices.id"), index=True)
    key: Mapped[str] = mapped_column(String(120))  # notification file name or job step
    event: Mapped[str] = mapped_column(String(16))
    from_state: Mapped[int | None] = mapped_column(Integer)
    to_state: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(UTCDateTime)


class SigningIdentity(Base):
    """An account's key for automatic signature (§4.3 credential + domain)."""

    __tablename__ = "signing_identities"
    __table_args__ = (UniqueConstraint("account_id", "domain"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    domain: Mapped[str] = mapped_column(String(100))
    pkcs12: Mapped[bytes] = mapped_column(LargeBinary)  # encrypted with the credential
    subject: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
