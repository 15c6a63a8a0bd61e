"""Every HTTP request: its id (X-Request-ID), its log line and its metrics, in one pure ASGI
middleware, the outermost of the app."""

from __future__ import annotations

import logging
import re
from time import perf_counter
from urllib.parse import unquote_plus

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from varco.core import metrics
from varco.core.errors import route_of
from varco.core.logs import current_request_id, new_request_id

log = logging.getLogger("varco.requests")

# A client's own X-Request-ID is kept when it is short and plain (it reaches log lines, error
# descriptions and callback headers); anything else is replaced by one of ours.
_CLIENT_ID = re.compile(rb"[A-Za-z0-9._:@/+=-]{1,64}")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"  # the route label of a request no route matches: one label, not its path
_FIELDS = "varco_log_fields"  # scope["state"] key: what an endpoint adds to the request's line


_RESERVED = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


def annotate(scope: Scope, **fields: object) -> None:
    """Fields for the request's log line (the file an upload stored): one line says it all."""
    if taken := fields.keys() & _RESERVED:  # logging refuses them as `extra`
        raise ValueError(f"log fields {sorted(taken)} are LogRecord attributes")
    scope.setdefault("state", {}).setdefault(_FIELDS, {}).update(fields)


class RequestMiddleware:
    """Pure ASGI (no BaseHTTPMiddleware overhead): sets request.state.request_id and the
    X-Request-ID answer header; then one log line and the metrics of the request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _client_id(scope) or new_request_id()
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        token = current_request_id.set(request_id)
        header = (b"x-request-id", request_id.encode())
        status = 500  # an exception that escapes: the error middleware answers 500
        started = perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", []).append(header)
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = perf_counter() - started
            route = route_template(scope)
            method = scope["method"] if scope["method"] in _METHODS else "other"
            metrics.observe_request(route, method, status, seconds)
            if log.isEnabledFor(logging.INFO):
                log.info(
                    "request",
                    extra={
                        "method": scope["method"][:16],
                        "route": route,
                        "path": _path_of(scope),
                        "status": status,
                        "duration_ms": round(seconds * 1000, 2),
                        "account": state.get("account_id"),
                        **state.get(_FIELDS, {}),
                    },
                )
            current_request_id.reset(token)


def _client_id(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            return value.decode() if _CLIENT_ID.fullmatch(value) else None
    return None


def route_template(scope: Scope) -> str:
    """The route's path template (`/api/v2/callbacks/{callback_id}`), never the path itself: a
    metric label per path would grow without bound."""
    route = scope.get("route") or route_of(scope)  # refused before routing, or a mount
    return getattr(route, "path", None) or UNMATCHED


def _path_of(scope: Scope) -> str:
    query = scope.get("query_string", b"")
    path = scope["path"]
    return scrub_query(f"{path}?{query.decode('latin-1')}") if query else path


# Query parameters whose values never reach a log line: clients that put credentials in the query
# string are refused (§5.2), but the request's line is written all the same. Names are matched
# decoded (`p%61ssword` is `password`).
_SECRET_NAME = re.compile(
    r"pass|pwd|token|secret|key|credential|signature|auth|bearer|session", re.IGNORECASE
)
_PARAMETER = re.compile(r"([^=&]*)(=?)([^&]*)")


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
    """For uvicorn's access log (off under `varco serve`, on where another uvicorn keeps it),
    whose record args are (client, method, path?query, version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], scrub_query(args[2]), *args[3:])
        return True
