"""SDI file names: `IT<transmitter tax code>_<5-char progressive>.xml` (decisions.md)."""

from __future__ import annotations

import string

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from varco.core.db import CONFLICT_INSERTS
from varco.invoices.models import FilenameSequence

_ALPHABET = string.digits + string.ascii_uppercase  # the SDI allows alphanumeric progressives
_WIDTH = 5


def encode_progressive(value: int) -> str:
    if not 0 < value < len(_ALPHABET) ** _WIDTH:
        raise OverflowError(f"progressive {value} does not fit {_WIDTH} characters")
    digits = []
    while value:
        value, rest = divmod(value, len(_ALPHABET))
        digits.append(_ALPHABET[rest])
    return "".join(reversed(digits)).rjust(_WIDTH, "0")


def _take_next(insert):  # noqa: ANN001, ANN202 - the dialect's insert construct
    return (
        insert(FilenameSequence)
        .values(transmitter=bindparam("transmitter"), last_value=1)
        .on_conflict_do_update(
            index_elements=[FilenameSequence.transmitter],
            set_={"last_value": FilenameSequence.last_value + 1},
        )
        .returning(FilenameSequence.last_value)
    )


_TAKE_NEXT = {name: _take_next(insert) for name, insert in CONFLICT_INSERTS.items()}  # built once


def next_filename(session: Session, transmitter: str, *, signed: bool) -> str:
    """Take the next progressive (never reused). One upsert that creates the row or increments it and
    returns the new value: the row lock it takes (PostgreSQL) or the write lock of the transaction
    (SQLite) serialises concurrent uploads until commit."""
    statement = _TAKE_NEXT[session.get_bind().dialect.name]
    # On the session's connection: a plain statement, without the ORM's bulk-insert machinery.
    value = session.connection().execute(statement, {"transmitter": transmitter}).scalar_one()
    return _name(transmitter, value, signed)


def peek_filename(session: Session, transmitter: str, *, signed: bool) -> str:
    """The name the next accepted file would get (dry runs take no progressive)."""
    current = session.scalar(
        select(FilenameSequence.last_value).where(FilenameSequence.transmitter == transmitter)
    )
    return _name(transmitter, (current or 0) + 1, signed)


def _name(transmitter: str, value: int, signed: bool) -> str:
    return f"{transmitter}_{encode_progressive(value)}.xml{'.p7m' if signed else ''}"
