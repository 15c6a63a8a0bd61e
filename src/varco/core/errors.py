"""One error type carrying HTTP status and contract code; one handler renders every error.

The shape of an error body is the route's, chosen once per router (`shaped_router`): the OAuth
body on sign-in (§2.2), the upload result on upload and uploadSigned (§2.8), `{errorCode,
errorDescription}` everywhere else. A 401 always has the OAuth body with the §5.4 text.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from enum import StrEnum
from typing import Any, ClassVar

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

log = logging.getLogger("varco.errors")

UNAUTHORIZED_TEXT = "Full authentication is required to access this resource"  # §5.4


class Shape(StrEnum):
    OAUTH = "oauth"  # §2.2 {error, error_description}
    CODED = "coded"  # {errorCode, errorDescription}
    UPLOAD = "upload"  # §2.8 {uploadFileName, errorCode, errorDescription}


# The OAuth body names errors as RFC 6749 §5.2 does; the contract's codes have these equivalents.
OAUTH_CODES = {
    "0001": "server_error",
    "0002": "invalid_request",
    "0033": "invalid_request",
    "0095": "temporarily_unavailable",
    "0429": "too_many_requests",
}


class VarcoError(Exception):
    """A refusal: HTTP status, contract code and message (the body's shape is the route's).

    Subclasses name a kind of refusal with its status and code; `code=`/`status=` give them for
    one refusal (an upload check, a §7.4 communication code)."""

    status: int = 500
    code: str = "0001"

    def __init__(
        self,
        message: str = "",
        *,
        code: str | None = None,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message or type(self).__doc__ or code or self.code)
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        self.headers = headers


class OAuthError(VarcoError):
    """Authentication failed."""

    status, code = 400, "invalid_grant"


class InvalidGrant(OAuthError):
    code = "invalid_grant"


class InvalidRequest(OAuthError):
    code = "invalid_request"


class UnsupportedGrantType(OAuthError):
    code = "unsupported_grant_type"


class Unauthorized(VarcoError):
    """Full authentication is required to access this resource"""

    status, code = 401, "unauthorized"


class Forbidden(VarcoError):
    """Valid request declined: the user lacks authorization."""

    status, code = 403, "0012"


class NotFound(VarcoError):
    """Resource not found."""

    status, code = 404, "0002"


class BadRequest(VarcoError):
    """Input parameter error."""

    status, code = 400, "0002"


class ServiceUnavailable(VarcoError):
    """Service temporarily unavailable; retry later."""

    status, code = 503, "0095"


class ShapedRoute(APIRoute):
    """A route whose refusals have `error_shape`; a body over its limit is `too_large_code`."""

    error_shape: ClassVar[Shape] = Shape.CODED
    too_large_code: ClassVar[str] = "0033"  # §7.2 "file exceeds the maximum size"


def shaped_router(shape: Shape = Shape.CODED, *, too_large_code: str = "0033", **kwargs: Any) -> APIRouter:
    """An APIRouter whose routes answer every refusal in `shape` (413 with `too_large_code`)."""
    route_class = type(
        f"{shape.name.title()}Route", (ShapedRoute,), {"error_shape": shape, "too_large_code": too_large_code}
    )
    return APIRouter(route_class=route_class, **kwargs)


def route_of(scope: Scope) -> BaseRoute | None:
    """The route of a request: matched already, or (refused before routing, e.g. by a limit) found."""
    route = scope.get("route")
    if route is None and (app := scope.get("app")) is not None:
        route = next((r for r in all_routes(app) if r.matches(scope)[0] is Match.FULL), None)
    return route


def all_routes(app: FastAPI) -> Iterator[BaseRoute]:
    """Every route of the app, those of included routers too."""
    return _flat(app.router.routes)


def _flat(routes: list[BaseRoute]) -> Iterator[BaseRoute]:
    for route in routes:
        included = getattr(route, "original_router", None)  # FastAPI keeps an included router whole
        if included is not None:
            yield from _flat(included.routes)
        else:
            yield route


def request_id(request: Request) -> str:
    return getattr(request.state, "request_id", "-")


def render(
    request: Request, *, status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The error body in the route's shape (OAuth for every 401)."""
    route = route_of(request.scope)
    shape = Shape.OAUTH if status == 401 else getattr(route, "error_shape", Shape.CODED)
    match shape:
        case Shape.OAUTH:
            body: dict[str, Any] = {"error": OAUTH_CODES.get(code, code), "error_description": message}
        case Shape.CODED:
            body = {"errorCode": code, "errorDescription": f"{message} [request {request_id(request)}]"}
        case Shape.UPLOAD:
            body = {
                "uploadFileName": None,
                "errorCode": code,
                "errorDescription": f"{message} [request {request_id(request)}]",
            }
    return JSONResponse(body, status_code=status, headers=headers)


def _varco_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, VarcoError)
    if exc.status >= 500:
        log.error("request %s failed: %s %s", request_id(request), exc.code, exc)
    return render(request, status=exc.status, code=exc.code, message=str(exc), headers=exc.headers)


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "header"))
        parts.append(f"{loc or 'request'}: {err.get('msg', 'invalid value')}")
    return "Invalid request: " + "; ".join(parts)


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return render(request, status=400, code="0002", message=_describe_validation(exc))


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 401:
        challenge = {"WWW-Authenticate": "Bearer"}
        return render(request, status=401, code="unauthorized", message=UNAUTHORIZED_TEXT, headers=challenge)
    if exc.status_code == 413:  # the body limit (core/bodies.py), counted while reading
        return render(
            request,
            status=413,
            code=getattr(route_of(request.scope), "too_large_code", "0033"),
            message=str(exc.detail),
            headers={"Connection": "close"},  # the rest of the body is not read
        )
    message = exc.detail if isinstance(exc.detail, str) else "Request cannot be met"
    return render(
        request,
        status=exc.status_code,
        code="0001" if exc.status_code >= 500 else "0002",
        message=message,
        headers=getattr(exc, "headers", None),
    )


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("request %s: unexpected error", request_id(request), exc_info=exc)
    # Starlette answers unhandled errors outside our middleware, so the id header is added here.
    return render(
        request,
        status=500,
        code="0001",
        message="Unexpected generic error",
        headers={"X-Request-ID": request_id(request)},
    )


def _database_error(request: Request, exc: Exception) -> JSONResponse:
    """SQLite's write lock held past busy_timeout by another writer: busy, not broken (503 0095)."""
    if "database is locked" in str(exc):
        log.warning("request %s: the database stayed locked", request_id(request))
        return render(
            request,
            status=503,
            code="0095",
            message="Service temporarily unavailable: the database is busy; retry later",
            headers={"Retry-After": "5", "X-Request-ID": request_id(request)},
        )
    return _unexpected(request, exc)


def install_handlers(app: FastAPI) -> None:
    app.add_exception_handler(OperationalError, _database_error)
    app.add_exception_handler(VarcoError, _varco_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
