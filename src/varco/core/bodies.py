"""Request bodies are counted while they are read, before authentication and parsing.

Every route accepts at most `Settings.max_body_bytes`; a route whose endpoint is marked with
`carries_file` (upload, uploadSigned, communications, the panel's upload, the simulator's inject)
accepts `Settings.file_body_bytes`. A declared Content-Length over the limit is refused before a
byte is read; a chunked body when the count passes it. The limit is read from the settings per
request (tests change them), and from the matched route when the endpoint reads: FastAPI sets
`scope["route"]` during routing, before anything reads the body.

FastAPI's own `max_body_size` takes an int fixed when the module is imported; this reads it when
the request comes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from varco.settings import Settings, get_settings

F = TypeVar("F", bound=Callable[..., object])
_FILE_BODY = "varco_carries_file"
LIMIT_SCOPE_KEY = "varco.body_limit"  # the limit that refused the body, for the error message


class BodyTooLarge(HTTPException):
    """413: rendered in the route's shape by core/errors.py (0033, AR03 for communications)."""

    def __init__(self, limit: int) -> None:
        super().__init__(status_code=413, detail=f"The request body exceeds the {limit} bytes accepted here")
        self.limit = limit


def carries_file(endpoint: F) -> F:
    """Mark an endpoint whose body carries a file: it accepts `Settings.file_body_bytes`."""
    setattr(endpoint, _FILE_BODY, True)
    return endpoint


def limit_for(scope: Scope, settings: Settings) -> int:
    endpoint = getattr(scope.get("route"), "endpoint", None)
    return settings.file_body_bytes if getattr(endpoint, _FILE_BODY, False) else settings.max_body_bytes


class BodyLimitMiddleware:
    """Pure ASGI: wraps `receive` so that no reader (FastAPI's body parsing, `request.body()`,
    form parsing) ever holds more than the route's limit."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        settings = get_settings()
        declared = _content_length(scope)
        counted = 0

        async def counting_receive() -> Message:
            nonlocal counted
            limit = limit_for(scope, settings)
            if declared is not None and declared > limit:
                scope[LIMIT_SCOPE_KEY] = limit
                raise BodyTooLarge(limit)
            message = await receive()
            if message["type"] == "http.request":
                counted += len(message.get("body", b""))
                if counted > limit:
                    scope[LIMIT_SCOPE_KEY] = limit
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, counting_receive, send)


def _content_length(scope: Scope) -> int | None:
    value = Headers(scope=scope).get("content-length")
    if value is None or not value.isascii() or not value.isdigit():
        return None  # h11 refuses a malformed Content-Length before the app sees it
    return int(value)
