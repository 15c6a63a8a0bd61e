"""SDI file names: `IT<transmitter tax code>_<5-char progressive>.xml` (decisions.md)."""

from __future__ import annotations

import string

from sqlalchemy import bindparam, select

from varco.core.dialects import per_dialect
from varco.core.uow import UnitOfWork
from varco.invoices.models import FilenameSequence

_ALPHABET = string.digits + string.ascii_uppercase  # the SDI allows alphanumeric progressives
_WIDTH = 5


def stem(filename: str) -> str:
    """The file name without `.xml`, `.xml.p7m` or `.p7m` (the base of notification and package names)."""
    for suffix in (".xml.p7m", ".p7m", ".xml"):
        if filename.lower().endswith(suffix):
            return filename[: -len(suffix)]
    return filename


def encode_progressive(value: int) -> str:
    if not 0 < value < len(_ALPHABET) ** _WIDTH:
        raise OverflowError(f"progressive {value} does not fit {_WIDTH} characters")
    digits = []
    while value:
        value, rest = divmod(value, len(_ALPHABET))
        digits.append(_ALPHABET[rest])
    return "".join(reversed(digits)).rjust(_WIDTH, "0")


def _take_next(insert):  # the dialect's insert construct
    return (
        insert(FilenameSequence)
        .values(transmitter=bindparam("transmitter"), last_value=1)
        .on_conflict_do_update(
            index_elements=[FilenameSequence.transmitter],
            set_={"last_value": FilenameSequence.last_value + 1},
        )
        .returning(FilenameSequence.last_value)
    )


_TAKE_NEXT = per_dialect(_take_next)


def next_filename(session: UnitOfWork, transmitter: str, *, signed: bool) -> str:
    """Take the next progressive (never reused). One upsert that creates the row or increments it and
    returns the new value: the row lock it takes (PostgreSQL) or the write lock of the transaction
    (SQLite) serialises concurrent uploads until commit."""
    statement = _TAKE_NEXT(session)
    # On the session's connection: a plain statement, without the ORM's bulk-insert machinery.
    value = session.connection().execute(statement, {"transmitter": transmitter}).scalar_one()
    return _name(transmitter, value, signed)


def peek_filename(session: UnitOfWork, transmitter: str, *, signed: bool) -> str:
    """The name the next accepted file would get (dry runs take no progressive)."""
    current = session.scalar(
        select(FilenameSequence.last_value).where(FilenameSequence.transmitter == transmitter)
    )
    return _name(transmitter, (current or 0) + 1, signed)


def _name(transmitter: str, value: int, signed: bool) -> str:
    return f"{transmitter}_{encode_progressive(value)}.xml{'.p7m' if signed else ''}"
