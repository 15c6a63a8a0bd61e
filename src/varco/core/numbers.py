"""Whole numbers from paths, query strings and JSON: ASCII digits only, within a column's range.

`int()` accepts what no client means (`³`, `١`, `1_000`) and values that no database column holds
(2**31 overflows PostgreSQL's INTEGER, 2**63 SQLite's): every endpoint parses through here and
answers 400 in the contract's shape instead of a 500.
"""

from __future__ import annotations

import re

from starlette.convertors import Convertor, register_url_convertor

from varco.core.errors import BadRequest

MAX_ID = 2**31 - 1  # the largest id: id columns are INTEGER, 32 bits on PostgreSQL
MAX_BIGINT = 2**63 - 1  # LIMIT/OFFSET and BIGINT columns
_DIGITS = re.compile(r"[0-9]+")  # not \d, which matches every script's digits


class NotAWholeNumber(BadRequest):
    """A parameter that must be a whole number is not one, or is out of its range."""


def whole_number(raw: str | int, name: str, *, low: int = 0, high: int = MAX_ID) -> int:
    """`raw` as an int in [low, high], or NotAWholeNumber naming the parameter and the range."""
    text = str(raw).strip() if not isinstance(raw, bool) else ""
    shown = text if len(text) <= 40 else text[:40] + "…"
    if not _DIGITS.fullmatch(text):
        raise NotAWholeNumber(f"{name} must be an integer {_bounds(low, high)}: got {shown!r}")
    # the length first: int() of thousands of digits is slow, and refused past 4300
    if len(text.lstrip("0")) > len(str(high)) or int(text) > high:
        raise NotAWholeNumber(f"{name} must be an integer {_bounds(low, high, above=True)}: got {shown}")
    number = int(text)
    if number < low:
        raise NotAWholeNumber(f"{name} must be an integer {_bounds(low, high)}: got {number}")
    return number


def _bounds(low: int, high: int, *, above: bool = False) -> str:
    if high < 10**9:  # a small range reads best whole
        return f"between {low} and {high}"
    return f"at most {high}" if above else f"{low} or more"


def optional_whole_number(
    raw: str | None, name: str, default: int, *, low: int = 0, high: int = MAX_ID
) -> int:
    """As `whole_number`; blank or absent (clients send empty strings for unused fields): `default`."""
    if raw is None or not raw.strip():
        return default
    return whole_number(raw, name, low=low, high=high)


def is_id(raw: str) -> bool:
    """Could `raw` name a row (digits, within an id column)? For lookups where anything else is 404."""
    return len(raw) <= 10 and bool(_DIGITS.fullmatch(raw)) and int(raw) <= MAX_ID


def _at_most(limit: int) -> str:
    """A regular expression matching the decimal numbers from 0 to `limit`, and nothing else."""
    digits = str(limit)
    parts = [f"[0-9]{{1,{len(digits) - 1}}}", digits]
    for i, digit in enumerate(map(int, digits)):
        low = 1 if i == 0 else 0
        if digit > low:  # same prefix, a smaller digit here, anything after
            parts.append(f"{digits[:i]}[{low}-{digit - 1}][0-9]{{{len(digits) - i - 1}}}")
    return "|".join(parts)


class IdConvertor(Convertor[int]):
    """`{name:id}` in a route path: a number an id column can hold; any other matches no route
    (404) instead of overflowing the database (500)."""

    regex = _at_most(MAX_ID)

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("id", IdConvertor())
