"""Stored files (invoices, notifications, packages) as rows: written in the same transaction as
the records that point at them, so a failure never leaves half of an upload behind."""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import ForeignKey, Integer, LargeBinary, String, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from varco.core.db import Base, UTCDateTime


class Blob(Base):
    __tablename__ = "blobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id"), index=True
    )  # whose space it uses
    name: Mapped[str] = mapped_column(String(255))
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    size: Mapped[int] = mapped_column(Integer)
    content: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


def store(session: Session, name: str, content: bytes, account_id: int | None, now: datetime) -> Blob:
    blob = Blob(
        account_id=account_id,
        name=name,
        sha256=hashlib.sha256(content).hexdigest(),
        size=len(content),
        content=content,
        created_at=now,
    )
    session.add(blob)
    session.flush()
    return blob


def used_bytes(session: Session, account_id: int) -> int:
    return (
        session.scalar(select(func.coalesce(func.sum(Blob.size), 0)).where(Blob.account_id == account_id))
        or 0
    )
