"""Query values as real clients send them: empty strings mean "not given", booleans as text (decisions.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from varco.core.errors import BadRequest
from varco.core.numbers import whole_number
from varco.invoices.states import LABELS, InvoiceState
from varco.search import dates

_DOCUMENT_TYPE = re.compile(r"^TD\d{2}$")


class SearchInputError(BadRequest):
    """A search parameter is wrong."""


def text(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    return value.strip()


def upper(value: str | None) -> str | None:
    value = text(value)
    return value.upper() if value else None


def flag(value: str | None, name: str, default: bool = False) -> bool:
    value = text(value)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise SearchInputError(f"{name} must be true or false, not {value!r}")


def instant(value: str | None, name: str, *, end_of_day: bool = False) -> datetime | None:
    value = text(value)
    if value is None:
        return None
    try:
        return dates.parse_instant(value, end_of_day=end_of_day)
    except dates.DateParseError as exc:
        raise SearchInputError(f"{name}: {exc}") from None


def state(value: str | None) -> int | None:
    value = text(value)
    if value is None:
        return None
    try:
        return InvoiceState.parse(value).value
    except ValueError:
        known = ", ".join(f"{s.value} {label}" for s, label in LABELS.items())
        raise SearchInputError(f"status {value!r} is unknown; use a number or a label: {known}") from None


def document_type(value: str | None) -> str | None:
    value = upper(value)
    if value is not None and not _DOCUMENT_TYPE.match(value):
        raise SearchInputError(f"documentType {value!r} is not a document type such as TD01")
    return value


def identifier(value: str | None, name: str) -> int | None:
    """Internal ids are numbers; anything else cannot name an invoice."""
    value = text(value)
    return None if value is None else whole_number(value, name)


@dataclass(frozen=True)
class Filters:
    """What a search narrows on; None means any."""

    created_from: datetime | None = None
    created_to: datetime | None = None
    modified_from: datetime | None = None
    modified_to: datetime | None = None
    sender_country: str | None = None
    sender_vat: str | None = None
    sender_fiscal_code: str | None = None
    receiver_country: str | None = None
    receiver_vat: str | None = None
    receiver_fiscal_code: str | None = None
    state: int | None = None
    document_type: str | None = None


Party = tuple[str | None, str | None, str | None]  # country, VAT number, tax code as sent


def filters(
    *,
    created: tuple[datetime | None, datetime | None],
    sender: Party,
    receiver: Party,
    modified: tuple[datetime | None, datetime | None] = (None, None),
    status: str | None = None,
    doc_type: str | None = None,
) -> Filters:
    """A search's filters from its query values (v1 and v2 name them differently, mean the same)."""
    return Filters(
        created_from=created[0],
        created_to=created[1],
        modified_from=modified[0],
        modified_to=modified[1],
        sender_country=upper(sender[0]),
        sender_vat=upper(sender[1]),
        sender_fiscal_code=upper(sender[2]),
        receiver_country=upper(receiver[0]),
        receiver_vat=upper(receiver[1]),
        receiver_fiscal_code=upper(receiver[2]),
        state=state(status),
        document_type=document_type(doc_type),
    )


def check_range(start: datetime | None, end: datetime | None, start_name: str, end_name: str) -> None:
    if start is not None and end is not None and start > end:
        raise SearchInputError(f"{start_name} is after {end_name}; swap them")
