"""Financial-communication requests (§2.7): one row per `POST /api/v2/comfin` accepted."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class ComfinRequest(Base):
    """A communication file (or ZIP of files) of one declarant, on its way to and back from the SDI."""

    __tablename__ = "comfin_requests"
    __table_args__ = (Index("ix_comfin_requests_result_pdd", "result", "pdd_available"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    request_id: Mapped[str] = mapped_column(String(16), unique=True)  # §2.7 requestId
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)  # the declarant
    sent_by_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))  # the caller
    user_id: Mapped[str | None] = mapped_column(String(150))  # §2.7 userId as sent
    kind: Mapped[str] = mapped_column(String(2))  # LI | DF
    tax_code: Mapped[str] = mapped_column(String(16))  # the declarant's, from the XML
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))  # the decoded dataFile (.p7m or ZIP)
    is_zip: Mapped[bool] = mapped_column(Boolean, default=False)
    file_count: Mapped[int] = mapped_column(Integer, default=1)
    file_name: Mapped[str] = mapped_column(String(64), unique=True)  # IT<cf>_LI_<progressive>.xml
    result: Mapped[str] = mapped_column(String(4))  # §7.4: SF01 SF02 SF03 AR06 AR07 AR99
    status: Mapped[str] = mapped_column(String(16))  # ACCEPTED SENT PROCESSED ERROR (docs/comfin.md)
    error: Mapped[str | None] = mapped_column(String(500))  # why, when result is not SF01/SF02
    file_id: Mapped[str | None] = mapped_column(String(18))  # §2.7 fileId: the SDI's IDFile
    receipt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # the SDI's DataOraRicezione
    elaborated_result: Mapped[str | None] = mapped_column(String(4))  # §7.5 ES01 ES02 ES03
    notify_filename: Mapped[str | None] = mapped_column(String(64))
    notify_blob_id: Mapped[int | None] = mapped_column(ForeignKey("blobs.id"))  # the esito XML
    pdd_available: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
