"""SDI file names: `IT<transmitter tax code>_<5-char progressive>.xml` (decisions.md)."""

from __future__ import annotations

import string

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

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


def _locked_sequence(session: Session, transmitter: str) -> FilenameSequence:
    # Create the row if missing without racing another transaction, then lock it.
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    session.execute(
        insert(FilenameSequence).values(transmitter=transmitter, last_value=0).on_conflict_do_nothing()
    )
    query = select(FilenameSequence).where(FilenameSequence.transmitter == transmitter).with_for_update()
    return session.execute(query.execution_options(populate_existing=True)).scalar_one()


def next_filename(session: Session, transmitter: str, *, signed: bool) -> str:
    """Take the next progressive (never reused: the row lock serialises concurrent uploads)."""
    sequence = _locked_sequence(session, transmitter)
    sequence.last_value += 1
    session.flush()
    return _name(transmitter, sequence.last_value, signed)


def peek_filename(session: Session, transmitter: str, *, signed: bool) -> str:
    """The name the next accepted file would get (dry runs take no progressive)."""
    current = session.scalar(
        select(FilenameSequence.last_value).where(FilenameSequence.transmitter == transmitter)
    )
    return _name(transmitter, (current or 0) + 1, signed)


def _name(transmitter: str, value: int, signed: bool) -> str:
    return f"{transmitter}_{encode_progressive(value)}.xml{'.p7m' if signed else ''}"
