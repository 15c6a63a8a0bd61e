"""Request-body field types tolerant of what real clients send (decisions.md), each with a JSON
schema that says exactly what it accepts, so that the OpenAPI document and the fuzzing gate agree
with the server: booleans as text, empty strings for unused fields, numbers where text is meant,
whole numbers as text (ASCII digits only, within an id column)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema

from varco.core.numbers import MAX_ID

_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")
_DIGITS = re.compile(r"\s*[0-9]{1,10}\s*")
_BOOL_TEXT = r"^\s*([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[01]|[Yy][Ee][Ss]|[Nn][Oo])?\s*$"


def _lenient_bool(value: Any) -> Any:
    """Booleans also arrive as JSON strings ("False", "true") or empty strings (= not given)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return False
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise ValueError("must be true or false (also as text: true, false, yes, no, 1, 0)")
    return value


def _empty_is_none(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


def _whole_number(value: Any) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ID:
        raise ValueError(f"must be a whole number from 0 to {MAX_ID}, written with the digits 0-9")
    return value


LenientBool = Annotated[
    bool,
    BeforeValidator(_lenient_bool),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "boolean"},
                {"type": "string", "pattern": _BOOL_TEXT},
                {"enum": [0, 1]},
                {"type": "null"},  # not given
            ],
            "default": False,
        }
    ),
]
OptionalText = Annotated[str | None, BeforeValidator(_empty_is_none)]
OptionalWholeNumber = Annotated[
    int | None,
    BeforeValidator(_whole_number),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": MAX_ID},
                {"type": "string", "pattern": r"^\s*[0-9]{0,10}\s*$"},
                {"type": "null"},
            ]
        }
    ),
]


def numbers_as_text(schema: dict[str, Any]) -> None:
    """`json_schema_extra` of a model with `coerce_numbers_to_str`: its text fields take numbers too."""
    for prop in schema.get("properties", {}).values():
        options = prop.get("anyOf")
        if options is not None and {"type": "string"} in options and {"type": "number"} not in options:
            options.append({"type": "number"})
        elif prop.get("type") == "string" and set(prop) <= {"type", "title", "description", "default"}:
            del prop["type"]
            prop["anyOf"] = [{"type": "string"}, {"type": "number"}]
