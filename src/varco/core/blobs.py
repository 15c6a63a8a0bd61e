"""Stored files (invoices, notifications, packages) as rows: written in the same transaction as
the records that point at them, so a failure never leaves half of an upload behind."""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, LargeBinary, String, bindparam, event, select, update
from sqlalchemy.orm import Mapped, Session, SessionTransaction, mapped_column

from varco.core.db import Base, UTCDateTime, append_row, per_dialect, transaction_info


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


# Built once: every upload and every SDI message stores a file.
_CONTENT = select(Blob.__table__.c.content).where(Blob.__table__.c.id == bindparam("id"))
_USAGE = StorageUsage.__table__.c  # Core, not ORM-enabled: every upload asks (half the cost)
_USED_BYTES = select(_USAGE.bytes).where(_USAGE.account_id == bindparam("account_id"))
_CONTENTS = "blob_contents"  # transaction_info: contents read in this transaction, by id


def _add_usage(insert):  # noqa: ANN001, ANN202 - the dialect's insert construct and its statement
    statement = insert(StorageUsage.__table__)
    return statement.on_conflict_do_update(
        index_elements=["account_id"],
        set_={"bytes": StorageUsage.__table__.c.bytes + statement.excluded.bytes},
    )


_ADD_USAGE = per_dialect(_add_usage)


def store(
    session: Session,
    name: str,
    content: bytes,
    account_id: int | None,
    now: datetime,
    sha256: str | None = None,  # the content's, when the caller has it already
) -> Blob:
    """Store a file; its size counts against `account_id`'s space in the same transaction (added
    at its commit, see _SPACE; `used_bytes` counts it already).

    No ORM flush (`append_row`): the Blob returned is not in the session (`rename` changes its name)."""
    values = {
        "account_id": account_id,
        "name": name,
        "sha256": sha256 or hashlib.sha256(content).hexdigest(),
        "size": len(content),
        "content": content,
        "created_at": now,
    }
    blob = append_row(session, Blob, values)
    if account_id is not None:
        if session.in_nested_transaction():  # a savepoint may roll the file back: count it with it
            _add_usage_now(session, account_id, len(content))
        else:
            space = session.info.setdefault(_SPACE, {})
            space[account_id] = space.get(account_id, 0) + len(content)
    return blob


# Space is added at commit, account by account in id order: the `storage_usage` row is then
# locked only at the end, and in the same order by every transaction. Added as each file was
# stored, two SDI deliveries between the same two clients (one storing for A then B, the other
# for B then A) deadlocked on PostgreSQL.
_SPACE = "varco_blob_space"  # session.info: bytes stored per account, not yet added


def _add_usage_now(session: Session, account_id: int, size: int) -> None:
    session.connection().execute(_ADD_USAGE(session), {"account_id": account_id, "bytes": size})


@event.listens_for(Session, "before_commit")
def _add_space(session: Session) -> None:
    # Also when a savepoint is released (this event cannot tell it from the commit of a transaction
    # that leaves a savepoint open): what the transaction stored before it then counts inside
    # it, and stays counted with it. Files stored inside a savepoint are counted at once (store).
    for account_id, size in sorted(session.info.pop(_SPACE, {}).items()):
        _add_usage_now(session, account_id, size)


@event.listens_for(Session, "after_transaction_end")
def _forget_space(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:  # rolled back (a commit has added and dropped it already)
        session.info.pop(_SPACE, None)


def rename(session: Session, blob_id: int, name: str) -> None:
    """Give a stored file the name known only after its owner row exists (the Blob that `store`
    returned is not in the session: changing it writes nothing)."""
    session.execute(update(Blob.__table__).where(Blob.__table__.c.id == blob_id).values(name=name))


def content(session: Session, blob_id: int) -> bytes:
    """A stored file's bytes, read once per transaction (the SDI simulator and the service stage
    that hands it the file read the same one). KeyError if there is no such file."""
    contents = transaction_info(session).setdefault(_CONTENTS, {})
    if blob_id not in contents:
        data = session.scalar(_CONTENT, {"id": blob_id})
        if data is None:
            raise KeyError(f"no stored file {blob_id}")
        contents[blob_id] = data
    return contents[blob_id]


def used_bytes(session: Session, account_id: int) -> int:
    """Bytes of stored files that count against the account's space (§2.3 usedSpaceKB, §7.2 0097)."""
    session.flush()  # a Core select: no autoflush of its own
    stored = session.scalar(_USED_BYTES, {"account_id": account_id}) or 0
    return stored + session.info.get(_SPACE, {}).get(account_id, 0)
