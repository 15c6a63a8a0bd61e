"""Tables of the SDI side: varco's inbound bookkeeping and the simulator's own state.

`sdi_unroutable` and `esiti_committente` belong to varco (what arrived, what a client answered).
The `sdi_sim_*` tables are the simulated Exchange System: they would not exist with a real channel.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class UnroutableInvoice(Base):
    """A received invoice whose client (1.4) matches no account: kept aside, never lost."""

    __tablename__ = "sdi_unroutable"

    id: Mapped[int] = mapped_column(primary_key=True)
    sdi_id: Mapped[str] = mapped_column(String(32), index=True)
    filename: Mapped[str] = mapped_column(String(64))
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))  # the invoice file (no account's space)
    metadata_blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))  # the MT file
    client_country: Mapped[str | None] = mapped_column(String(2))
    client_vat: Mapped[str | None] = mapped_column(String(28))
    client_fiscal_code: Mapped[str | None] = mapped_column(String(28))
    reason: Mapped[str] = mapped_column(String(255))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)
    invoice_id: Mapped[int | None] = mapped_column(ForeignKey("invoices.id"))  # set once redelivered
    redelivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class EsitoCommittente(Base):
    """The customer's outcome (EC01/EC02) on a received invoice: one per invoice (decisions.md)."""

    __tablename__ = "esiti_committente"

    id: Mapped[int] = mapped_column(primary_key=True)
    invoice_id: Mapped[int] = mapped_column(ForeignKey("invoices.id"), unique=True)
    sent_by_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    filename: Mapped[str] = mapped_column(String(64))  # the received invoice's file name
    sdi_id: Mapped[str] = mapped_column(String(32))
    esito: Mapped[str] = mapped_column(String(4))  # EC01 | EC02
    numero: Mapped[str | None] = mapped_column(String(20))
    anno: Mapped[int | None] = mapped_column(Integer)
    posizione: Mapped[int | None] = mapped_column(Integer)
    descrizione: Mapped[str | None] = mapped_column(String(255))
    message_id: Mapped[str | None] = mapped_column(String(14))
    esito_filename: Mapped[str] = mapped_column(String(80), unique=True)
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))  # the EC file as sent
    status: Mapped[str] = mapped_column(String(8))  # SENT | ACCEPTED | REJECTED
    scarto_filename: Mapped[str | None] = mapped_column(String(80))  # the SE, when REJECTED
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class SimFile(Base):
    """A file the simulated SDI took in. `id` is the IdentificativoSdI (see simulator.files)."""

    __tablename__ = "sdi_sim_files"
    __table_args__ = (Index("ix_sdi_sim_files_due_at", "due_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    # "varco" (sent by us) | "external" (injected) | "soap" (sent to the SDICoop face)
    origin: Mapped[str] = mapped_column(String(8))
    invoice_id: Mapped[int | None] = mapped_column(ForeignKey("invoices.id"), unique=True)  # sender's
    filename: Mapped[str] = mapped_column(String(64), index=True)
    format: Mapped[str | None] = mapped_column(String(5))
    codice_destinatario: Mapped[str | None] = mapped_column(String(7))
    blob_id: Mapped[int | None] = mapped_column(ForeignKey("blobs.id"))  # the file as received
    sha256: Mapped[str] = mapped_column(String(64))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)  # simulated time (DataOraRicezione)
    # The next thing the SDI does with the file and when (simulated time); NULL when finished.
    next_step: Mapped[str | None] = mapped_column(String(16))
    due_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    outcome: Mapped[str | None] = mapped_column(String(8))  # scenario outcome chosen at the check
    delay_seconds: Mapped[int] = mapped_column(Integer, default=0)
    errors: Mapped[list[dict[str, str]]] = mapped_column(JSON, default=list)  # NS ListaErrori
    facts: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # recipient, client, bodies
    counters: Mapped[dict[str, int]] = mapped_column(JSON, default=dict)  # NNN per message type
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # RC time (simulated)
    delivered_invoice_id: Mapped[int | None] = mapped_column(ForeignKey("invoices.id"))  # varco copy
    esito: Mapped[str | None] = mapped_column(String(4))  # the recipient's accepted EC01/EC02
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class SimInvoiceKey(Base):
    """The simulated SDI's register of the invoices it took (not refused): 00404 "fattura duplicata"
    is a second file with an invoice of the same supplier, type, number and date."""

    __tablename__ = "sdi_sim_invoice_keys"
    __table_args__ = (UniqueConstraint("supplier", "document_type", "number", "invoice_date"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    supplier: Mapped[str] = mapped_column(String(32))  # IdPaese + IdCodice of the CedentePrestatore
    document_type: Mapped[str] = mapped_column(String(4))
    number: Mapped[str] = mapped_column(String(20))
    invoice_date: Mapped[date] = mapped_column(Date)
    file_id: Mapped[int] = mapped_column(ForeignKey("sdi_sim_files.id"))


class SimScenario(Base):
    """A rule choosing the SDI's outcome: by file name, by recipient code, or the default."""

    __tablename__ = "sdi_sim_scenarios"
    __table_args__ = (UniqueConstraint("kind", "value"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # filename | recipient_code | default
    value: Mapped[str] = mapped_column(String(64))  # "" for the default rule
    outcome: Mapped[str | None] = mapped_column(String(8))  # RC MC NS AT NE-EC01 NE-EC02 DT
    esito_outcome: Mapped[str | None] = mapped_column(String(8))  # ACCEPT | SE
    delay_seconds: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class SimClock(Base):
    """The simulated clock: simulated now = clock.now() + offset (moved by `varco sdi advance`)."""

    __tablename__ = "sdi_sim_clock"

    id: Mapped[int] = mapped_column(primary_key=True)  # always 1
    offset_seconds: Mapped[int] = mapped_column(BigInteger, default=0)


class SimKey(Base):
    """The simulator's signing key and self-signed certificate, generated once per database."""

    __tablename__ = "sdi_sim_keys"

    id: Mapped[int] = mapped_column(primary_key=True)  # always 1
    key_pem: Mapped[str] = mapped_column(Text)
    cert_pem: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class SdiTransmission(Base):
    """One call varco owes the Exchange System over SDICoop (docs/sdicoop.md): an invoice to send
    (RiceviFile), a customer outcome (NotificaEsito), a communication (Trasmetti), the polling of
    its outcome (Esito). A row is committed with the change that causes it; a job makes the call
    after the commit, with no lock held while the SDI answers."""

    __tablename__ = "sdicoop_transmissions"
    __table_args__ = (UniqueConstraint("kind", "ref_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # invoice | esito | communication | poll
    ref_id: Mapped[int] = mapped_column(Integer)  # the invoice, esito or communication request id
    filename: Mapped[str] = mapped_column(String(80))  # NomeFile
    # PENDING (to call; after a refusal it is certain the SDI does not have) | IN_FLIGHT (called,
    # answer not recorded yet) | UNKNOWN (the SDI may have it: not called again until its
    # notifications say, or a long wait) | DONE | FAILED (a permanent refusal)
    status: Mapped[str] = mapped_column(String(10), index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    answer_id: Mapped[str | None] = mapped_column(String(32))  # IdentificativoSdI, or IDFile
    # Sent again after an UNKNOWN outcome: the SDI refuses the copy as a duplicate (00002, 00404)
    # when it had the first one, and that refusal is not the invoice's (sdi/inbound.py)
    resent: Mapped[bool] = mapped_column(Boolean, default=False)
    last_error: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class SdiExchange(Base):
    """An HTTP exchange with the Exchange System, as sent and as answered (the evidence)."""

    __tablename__ = "sdicoop_exchanges"

    id: Mapped[int] = mapped_column(primary_key=True)
    transmission_id: Mapped[int | None] = mapped_column(ForeignKey("sdicoop_transmissions.id"), index=True)
    direction: Mapped[str] = mapped_column(String(3))  # out: varco called; in: the SDI called
    operation: Mapped[str] = mapped_column(String(40))
    status: Mapped[int | None] = mapped_column(Integer)  # HTTP status, when there was one
    sdi_id: Mapped[str | None] = mapped_column(String(32), index=True)
    request_blob_id: Mapped[int | None] = mapped_column(ForeignKey("blobs.id"))
    response_blob_id: Mapped[int | None] = mapped_column(ForeignKey("blobs.id"))
    error: Mapped[str | None] = mapped_column(String(500))
    at: Mapped[datetime] = mapped_column(UTCDateTime)


class UnmatchedMessage(Base):
    """An SDI message that names no invoice of ours, or one about another transmission of a file
    (the copy of a re-send): recorded and answered, never applied, never lost."""

    __tablename__ = "sdi_unmatched_messages"

    id: Mapped[int] = mapped_column(primary_key=True)
    filename: Mapped[str] = mapped_column(String(80), unique=True)  # a re-delivery changes nothing
    type: Mapped[str | None] = mapped_column(String(4))
    sdi_id: Mapped[str | None] = mapped_column(String(32), index=True)
    nome_file: Mapped[str | None] = mapped_column(String(80))  # the invoice file it names
    reason: Mapped[str] = mapped_column(String(255))
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)
