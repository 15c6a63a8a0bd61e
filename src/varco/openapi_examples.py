"""The examples of the OpenAPI document, taken from a real exchange (docs/openapi.md).

`openapi_examples.json` holds, per operation ("METHOD /path"), the parameters, the request body and
the answers of one call made by scripts/record_openapi_examples.py against a fresh demo
installation. They go into the document as each parameter's `example`, the request body's and
each answer's: the recorded value replaces a hand-written `example`, never a set of named
`examples` (the event feed's, one per event type: callbacks/examples.py).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

EXAMPLES_FILE = "openapi_examples.json"


@cache
def recorded() -> dict[str, Any]:
    return json.loads((resources.files("varco") / EXAMPLES_FILE).read_text(encoding="utf-8"))


def document_examples(document: dict[str, Any], exchanges: dict[str, Any] | None = None) -> None:
    """Put the recorded exchange of each operation into the document."""
    exchanges = recorded() if exchanges is None else exchanges
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            exchange = exchanges.get(f"{method.upper()} {path}")
            if exchange is not None:
                _document(operation, exchange)


def _document(operation: dict[str, Any], exchange: dict[str, Any]) -> None:
    sent = exchange.get("parameters", {})
    for parameter in operation.get("parameters", []):
        if parameter["name"] in sent:
            parameter["example"] = _typed(sent[parameter["name"]], parameter.get("schema", {}))
    request = exchange.get("request")
    if request is not None and "requestBody" in operation:
        _put(operation["requestBody"].get("content", {}).get(request["mediaType"]), request["body"])
    for status, answer in exchange.get("responses", {}).items():
        response = operation.get("responses", {}).get(status)
        if response is not None and answer["body"] is not None:
            _put(response.get("content", {}).get(answer["mediaType"]), answer["body"])


def _put(content: dict[str, Any] | None, example: Any) -> None:
    if content is not None and "examples" not in content:
        content["example"] = example


def _typed(value: Any, schema: dict[str, Any]) -> Any:
    """A query value as sent (text on the wire), in the type the parameter's schema declares."""
    kind = schema.get("type")
    if kind == "integer":
        return int(value)
    if kind == "boolean":
        return value if isinstance(value, bool) else str(value).strip().lower() in ("true", "1", "yes")
    if kind == "string":
        return value if isinstance(value, str) else json.dumps(value)
    return value
