"""Request identifiers: one per request, in the response header, the logs and error descriptions."""

from __future__ import annotations

import logging
import re
import uuid
from contextvars import ContextVar
from urllib.parse import unquote_plus

from starlette.types import ASGIApp, Message, Receive, Scope, Send

current_request_id: ContextVar[str] = ContextVar("varco_request_id", default="-")


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request_id.get()
        return True


class RequestIdMiddleware:
    """Pure ASGI (no BaseHTTPMiddleware overhead): sets request.state.request_id and X-Request-ID."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id
        token = current_request_id.set(request_id)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", []).append((b"x-request-id", request_id.encode()))
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            current_request_id.reset(token)


# Query parameters whose values never reach a log line: clients that put credentials in the query
# string are refused (§5.2), but the access log writes the request line before that. Names are
# matched decoded (`p%61ssword` is `password`).
_SECRET_NAME = re.compile(
    r"pass|pwd|token|secret|key|credential|signature|auth|bearer|session", re.IGNORECASE
)
_PARAMETER = re.compile(r"([^=&;#]*)(=?)([^&;#]*)")


def scrub_query(path: str) -> str:
    """The path with the values of secret-looking query parameters replaced by `***`."""
    base, mark, query = path.partition("?")
    if not mark:
        return path

    def scrub(match: re.Match[str]) -> str:
        name, equals, value = match.groups()
        secret = value and _SECRET_NAME.search(unquote_plus(name))
        return f"{name}{equals}***" if secret else match.group(0)

    return f"{base}?{_PARAMETER.sub(scrub, query)}"


class ScrubQueryFilter(logging.Filter):
    """For uvicorn's access log, whose record args are (client, method, path?query, version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], scrub_query(args[2]), *args[3:])
        return True
