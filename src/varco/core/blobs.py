"""Stored files (invoices, notifications, packages) as rows: written in the same transaction as
the records that point at them, so a failure never leaves half of an upload behind."""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, LargeBinary, String, bindparam, delete, select, update
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime, append_row
from varco.core.dialects import per_dialect
from varco.core.uow import Fact, UnitOfWork


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
# The committed bytes of :account_id, as a column of a caller's own select (an upload reads them
# with its duplicate check, in one statement); `used_bytes_with` adds this transaction's.
STORED_BYTES = _USED_BYTES.scalar_subquery()
# Read in this transaction, by id (one job's files: dropped before the next job of a batch).
_CONTENTS: Fact[dict[int, bytes]] = Fact("blob contents", dict, per_job=True)
# Read ahead for the jobs of a batch, in one statement (`read_ahead`); each taken by its job.
_AHEAD: Fact[dict[int, bytes]] = Fact("blob contents read ahead", dict)
_BLOBS = Blob.__table__.c
_READ_AHEAD = select(_BLOBS.id, _BLOBS.content).where(
    _BLOBS.id.in_(bindparam("ids", expanding=True)), _BLOBS.size <= bindparam("max_size")
)
READ_AHEAD_MAX_SIZE = 64 * 1024  # a batch's files held at once: typical invoices, not large ones


def _add_usage(insert):  # the dialect's insert construct and its statement
    statement = insert(StorageUsage.__table__)
    return statement.on_conflict_do_update(
        index_elements=["account_id"],
        set_={"bytes": StorageUsage.__table__.c.bytes + statement.excluded.bytes},
    )


_ADD_USAGE = per_dialect(_add_usage)


def store(
    uow: UnitOfWork,
    name: str,
    content: bytes,
    account_id: int | None,
    now: datetime,
    sha256: str | None = None,  # the content's, when the caller has it already
) -> Blob:
    """Store a file; its size counts against `account_id`'s space in the same transaction (added
    at its commit, see _add_space; `used_bytes` counts it already).

    No ORM flush (`append_row`): the Blob returned is not in the session (`rename` changes its name)."""
    values = {
        "account_id": account_id,
        "name": name,
        "sha256": sha256 or hashlib.sha256(content).hexdigest(),
        "size": len(content),
        "content": content,
        "created_at": now,
    }
    blob = append_row(uow, Blob, values)
    if account_id is not None:
        if uow.in_nested_transaction():  # a savepoint may roll the file back: count it with it
            _add_usage_now(uow, account_id, len(content))
        else:
            uow.stored_bytes[account_id] = uow.stored_bytes.get(account_id, 0) + len(content)
            uow.before_commit(_add_space, key=_add_space)
    return blob


def _add_usage_now(uow: UnitOfWork, account_id: int, size: int) -> None:
    uow.connection().execute(_ADD_USAGE(uow), {"account_id": account_id, "bytes": size})


def _add_space(uow: UnitOfWork) -> None:
    """Space is added at commit, account by account in id order: the `storage_usage` rows are
    then locked only at the end, and in the same order by every transaction. Added as each file
    was stored, two SDI deliveries between the same two clients (one storing for A then B, the
    other for B then A) deadlocked on PostgreSQL."""
    for account_id, size in sorted(uow.stored_bytes.items()):
        _add_usage_now(uow, account_id, size)
    uow.stored_bytes = {}


def discard(uow: UnitOfWork, blob: Blob) -> None:
    """Take back a file that `store` stored in this transaction and nothing points at (its row
    and the space it counted): for a caller that learns only from its next insert that the file
    was not needed (a notification received twice)."""
    uow.execute(delete(Blob.__table__).where(Blob.__table__.c.id == blob.id))
    if blob.account_id is not None:
        if uow.in_nested_transaction():  # as `store` counted it
            _add_usage_now(uow, blob.account_id, -blob.size)
        else:
            uow.stored_bytes[blob.account_id] -= blob.size


def rename(uow: UnitOfWork, blob_id: int, name: str) -> None:
    """Give a stored file the name known only after its owner row exists (the Blob that `store`
    returned is not in the session: changing it writes nothing)."""
    uow.execute(update(Blob.__table__).where(Blob.__table__.c.id == blob_id).values(name=name))


def content(uow: UnitOfWork, blob_id: int) -> bytes:
    """A stored file's bytes, read once per transaction (the SDI simulator and the service stage
    that hands it the file read the same one). KeyError if there is no such file."""
    contents = uow.fact(_CONTENTS)
    if blob_id not in contents:
        data = uow.fact(_AHEAD).pop(blob_id, None) or uow.scalar(_CONTENT, {"id": blob_id})
        if data is None:
            raise KeyError(f"no stored file {blob_id}")
        contents[blob_id] = data
    return contents[blob_id]


def read_ahead(uow: UnitOfWork, blob_ids: list[int]) -> None:
    """Read the files of a batch's jobs in one statement (those up to READ_AHEAD_MAX_SIZE; larger
    ones are read by their job): `content` then needs no query for them."""
    uow.fact(_AHEAD).update(read_small(uow, blob_ids))


def read_small(uow: UnitOfWork, blob_ids: list[int]) -> dict[int, bytes]:
    """The files among these up to READ_AHEAD_MAX_SIZE, by id, in one statement."""
    if not blob_ids:
        return {}
    rows = uow.execute(_READ_AHEAD, {"ids": blob_ids, "max_size": READ_AHEAD_MAX_SIZE})
    return {blob_id: data for blob_id, data in rows}


def used_bytes(uow: UnitOfWork, account_id: int) -> int:
    """Bytes of stored files that count against the account's space (§2.3 usedSpaceKB, §7.2 0097)."""
    uow.flush()  # a Core select: no autoflush of its own
    return used_bytes_with(uow, account_id, uow.scalar(_USED_BYTES, {"account_id": account_id}))


def used_bytes_with(uow: UnitOfWork, account_id: int, stored: int | None) -> int:
    """`used_bytes`, given the committed bytes a caller read itself (`STORED_BYTES`)."""
    return (stored or 0) + uow.stored_bytes.get(account_id, 0)
