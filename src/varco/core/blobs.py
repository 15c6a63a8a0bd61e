"""Stored files (invoices, notifications, packages) as rows: written in the same transaction as
the records that point at them, so a failure never leaves half of an upload behind."""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, LargeBinary, String, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from varco.core.db import Base, UTCDateTime, conflict_insert


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


class StorageUsage(Base):
    """Bytes stored per account, kept with every store (a SUM over blobs would grow with the archive)."""

    __tablename__ = "storage_usage"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)


def store(session: Session, name: str, content: bytes, account_id: int | None, now: datetime) -> Blob:
    """Store a file; its size counts against `account_id`'s space in the same transaction."""
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
    if account_id is not None:
        insert = conflict_insert(session)
        statement = insert(StorageUsage).values(account_id=account_id, bytes=len(content))
        session.execute(
            statement.on_conflict_do_update(
                index_elements=[StorageUsage.account_id], set_={"bytes": StorageUsage.bytes + len(content)}
            )
        )
    return blob


def used_bytes(session: Session, account_id: int) -> int:
    """Bytes of stored files that count against the account's space (§2.3 usedSpaceKB, §7.2 0097)."""
    return session.scalar(select(StorageUsage.bytes).where(StorageUsage.account_id == account_id)) or 0
